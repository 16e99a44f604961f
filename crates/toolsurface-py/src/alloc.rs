//! The extension's allocator: large blocks mapped from the kernel, the rest from the
//! system allocator.
//!
//! glibc serves each rayon worker from an arena of its own, and gives a non-main arena's
//! free top back to the kernel only when it outgrows the trim threshold; that threshold
//! rises to twice the largest mapped block freed so far (up to 64 MiB), and `malloc_trim`
//! never releases a non-main arena's top. An index build's temporaries, megabytes a worker,
//! raised the threshold when freed and then stayed in the workers' arenas, resident and
//! unused, for the life of the process (docs/performance.md, "Memory and setup at scale").
//! Blocks of [`LARGE`] bytes or more are mapped and unmapped here instead: freeing one hands
//! it back at once and moves no threshold of glibc's. Smaller blocks, which is all a search
//! allocates, go to the system allocator as before.
//!
//! Linux only (`mremap`); elsewhere every block goes to the system allocator.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of this many bytes or more are mapped. Below glibc's starting mmap threshold
/// (128 KiB): at 256 KiB the workers' arenas still kept 2.4 MB each after a build of 10,000
/// tools, at 64 KiB 0.7 MB. No search allocates a block this size (its buffers are kept per
/// thread), so only builds pay the system calls.
pub(crate) const LARGE: usize = 64 * 1024;

/// The alignment every mapping has (the smallest page size on Linux): a block needing more
/// goes to the system allocator.
const PAGE: usize = 4096;

/// The global allocator of the extension (see the module's documentation).
pub(crate) struct Allocator;

/// Whether a block of `layout` is mapped. `dealloc` and `realloc` are given the layout the
/// block was allocated with (`GlobalAlloc`'s contract), so they tell mapped blocks from the
/// system allocator's by the same test.
fn is_mapped(layout: Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= LARGE && layout.align() <= PAGE
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod pages {
    /// `size` fresh bytes, zeroed and page-aligned, or null. Faulted in by the same call
    /// (`MAP_POPULATE`): a build writes every page it asks for, and one call is cheaper
    /// than a fault a page.
    pub(super) fn map(size: usize) -> *mut u8 {
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing
        // touches no memory of ours; failure is reported as MAP_FAILED and turned into the
        // null that `GlobalAlloc` expects.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            std::ptr::null_mut()
        } else {
            p.cast()
        }
    }

    /// Unmaps the `size` bytes at `p`, which `map` or `remap` made with that size.
    ///
    /// # Safety
    /// `p` is a live mapping of `size` bytes from this module, used no more after the call.
    pub(super) unsafe fn unmap(p: *mut u8, size: usize) {
        // SAFETY: by the caller's contract the range is one whole mapping of ours that
        // nothing uses any more. munmap fails only for an invalid range, which that
        // excludes; there is nothing to do on failure but keep the pages.
        unsafe { libc::munmap(p.cast(), size) };
    }

    /// The mapping of `old` bytes at `p` grown or shrunk to `new` bytes, moved if need be
    /// (its contents kept), or null with the old mapping untouched.
    ///
    /// # Safety
    /// `p` is a live mapping of `old` bytes from this module; on success it is used no more.
    pub(super) unsafe fn remap(p: *mut u8, old: usize, new: usize) -> *mut u8 {
        // SAFETY: by the caller's contract the range is one whole mapping of ours;
        // MREMAP_MAYMOVE lets the kernel move it, and on failure it leaves it as it was.
        let q = unsafe { libc::mremap(p.cast(), old, new, libc::MREMAP_MAYMOVE) };
        if q == libc::MAP_FAILED {
            std::ptr::null_mut()
        } else {
            q.cast()
        }
    }
}

#[cfg(not(target_os = "linux"))]
#[allow(unsafe_code)] // `unsafe fn` signatures only, matching the Linux module's
mod pages {
    // Never called: `is_mapped` is false off Linux.
    pub(super) fn map(_: usize) -> *mut u8 {
        std::ptr::null_mut()
    }
    pub(super) unsafe fn unmap(_: *mut u8, _: usize) {}
    pub(super) unsafe fn remap(_: *mut u8, _: usize, _: usize) -> *mut u8 {
        std::ptr::null_mut()
    }
}

// SAFETY: every block is either a mapping of exactly its layout's size (page-aligned, so
// aligned for any layout `is_mapped` admits; anonymous mappings are zeroed) or the system
// allocator's, and each method hands a block back to whichever made it, told by the layout
// the caller must pass unchanged. `realloc` between the two kinds allocates the new block,
// copies the smaller size and frees the old one, as the trait's default does.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_mapped(layout) {
            pages::map(layout.size())
        } else {
            // SAFETY: the caller's layout has a non-zero size, as `GlobalAlloc` requires.
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if is_mapped(layout) {
            pages::map(layout.size())
        } else {
            // SAFETY: as in `alloc`.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if is_mapped(layout) {
            // SAFETY: a mapped layout's block was made by `map` or `remap` with this size.
            unsafe { pages::unmap(ptr, layout.size()) }
        } else {
            // SAFETY: the block is the system allocator's, with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size`, rounded up to the alignment, does not
        // overflow isize, which is what `from_size_align_unchecked` needs.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (is_mapped(layout), is_mapped(new_layout)) {
            // SAFETY: the block is the system allocator's, with this layout.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            // SAFETY: the block is a mapping of `layout.size()` bytes, and on success the
            // caller uses only the new pointer.
            (true, true) => unsafe { pages::remap(ptr, layout.size(), new_size) },
            _ => {
                // SAFETY: `new_layout` has a non-zero size (at least the smaller of a
                // mapped size and a non-zero one) and the old block's alignment.
                let new = unsafe { self.alloc(new_layout) };
                if !new.is_null() {
                    // SAFETY: both blocks are live, distinct and at least this long.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                new
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_both_kinds_keep_their_contents_through_realloc() {
        let a = Allocator;
        for (from, to) in [
            (100, 300_000),
            (300_000, 100),
            (300_000, 900_000),
            (900_000, 300_000),
        ] {
            let layout = Layout::from_size_align(from, 8).unwrap();
            #[allow(unsafe_code)]
            // SAFETY: each block is made, grown and freed once, with its own layout.
            unsafe {
                let p = a.alloc(layout);
                assert!(!p.is_null());
                for i in 0..from {
                    *p.add(i) = (i % 251) as u8;
                }
                let q = a.realloc(p, layout, to);
                assert!(!q.is_null());
                for i in 0..from.min(to) {
                    assert_eq!(*q.add(i), (i % 251) as u8);
                }
                a.dealloc(q, Layout::from_size_align(to, 8).unwrap());
            }
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_and_big_alignments_go_to_the_system() {
        let a = Allocator;
        let layout = Layout::from_size_align(LARGE * 2, 8).unwrap();
        assert!(is_mapped(layout) == cfg!(target_os = "linux"));
        assert!(!is_mapped(
            Layout::from_size_align(LARGE * 2, PAGE * 2).unwrap()
        ));
        assert!(!is_mapped(Layout::from_size_align(LARGE - 1, 8).unwrap()));
        #[allow(unsafe_code)]
        // SAFETY: one block, made and freed with its own layout.
        unsafe {
            let p = a.alloc_zeroed(layout);
            assert!(!p.is_null());
            assert!((0..layout.size()).step_by(4093).all(|i| *p.add(i) == 0));
            a.dealloc(p, layout);
        }
    }
}
