#!/usr/bin/env bash
# Release build: a stripped abi3 wheel tagged manylinux2014 (glibc 2.17: RHEL 7/8, Ubuntu
# 18.04+, Debian 10+, any CPython from 3.10) and an sdist, into dist/ (or the folder given).
#
#   bash scripts/build_wheel.sh [OUT_DIR]
#
# A plain `maturin build --release` links against this machine's glibc and is tagged
# manylinux_2_34, which older distributions refuse; zig (from PyPI's ziglang) cross-links
# against glibc 2.17 instead. The wheel is then audited, so a wrong tag fails here, not on
# a user's machine. Needs cargo and Python with pip; installs maturin, ziglang and
# auditwheel into the running Python if they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
mkdir -p "$out"

python -m pip install -q 'maturin>=1.7,<2' 'ziglang>=0.13' 'auditwheel>=6'

rm -f "$out"/toolsurface-*.whl "$out"/toolsurface-*.tar.gz
python -m maturin build --release --strip --zig --compatibility manylinux2014 --out "$out"
python -m maturin sdist --out "$out"

wheel=$(ls "$out"/toolsurface-*.whl)
echo "wheel: $wheel ($(du -k "$wheel" | cut -f1) KiB)"
case "$wheel" in
  *-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl | *-abi3-manylinux2014_*.whl) ;;
  *) echo "unexpected wheel tag: $wheel" >&2; exit 1 ;;
esac
# auditwheel reads the .so's symbol versions: it must find the wheel consistent with
# manylinux2014 and no external library to bundle.
python -m auditwheel show "$wheel" | tee "$out/auditwheel.txt"
grep -q 'manylinux_2_17' "$out/auditwheel.txt"
# Stripped: no symbol table left in the native module.
python - "$wheel" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    so = [n for n in z.namelist() if n.endswith(".so")]
    assert so == ["toolsurface/_native.abi3.so"], so
    data = z.read(so[0])
    assert b".symtab" not in data, "native module is not stripped"
    print(f"native module {len(data) // 1024} KiB, stripped")
EOF
ls -l "$out"
