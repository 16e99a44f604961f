"""Tools, retrieval settings and search hits: validated, immutable values.

A malformed tool raises :class:`~toolsurface.errors.ToolDefinitionError` naming the tool and
each bad field, whether it is built (``Tool(...)``, ``Tool.model_validate``) or registered
from a mapping, so a host loading hundreds of MCP tools learns which one is broken and why.
"""

from __future__ import annotations

import copy
import json
import pickle
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolsurface._engine import native_module
from toolsurface._internal.invisible import strip_invisible
from toolsurface._internal.json_check import json_problem
from toolsurface.errors import ToolDefinitionError

__all__ = [
    "FIELD_NAMES",
    "MAX_DESCRIPTION_CHARS",
    "SETTING_MAX",
    "TOOL_NAME_PATTERN",
    "FieldValues",
    "RetrievalSettings",
    "SearchHit",
    "TermContribution",
    "Tool",
    "tool_from_mapping",
]

#: Field order, the same in both engines and in every table of weights. The first five are
#: the tool's own text; ``learned`` holds the requests a host taught the registry lead to it
#: (``registry.learn``, docs/analysis.md §9), never anything sent to a provider.
FIELD_NAMES = ("name", "search_hint", "summary", "body", "params", "learned")
#: MCP's rule for a tool name: 1 to 128 letters, digits, ``_``, ``-`` or ``.``.
TOOL_NAME_PATTERN = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
#: A description longer than this is refused at registration (hostile or broken input).
MAX_DESCRIPTION_CHARS = 1_000_000


class Tool(BaseModel):
    """A tool a model can call: what the host registers and the provider receives.

    A bad field raises :class:`~toolsurface.errors.ToolDefinitionError` (a ``ValueError``)
    naming the tool and every bad field, never pydantic's ``ValidationError``:

    >>> Tool(name="read file")
    Traceback (most recent call last):
    ...
    toolsurface.errors.ToolDefinitionError: tool 'read file': field 'name': must be 1 to 128 ...
    >>> try:
    ...     Tool.model_validate({"name": "read file", "description": 5})
    ... except ValueError as err:
    ...     print(type(err).__name__, err.tool, [field for field, _ in err.problems])
    ToolDefinitionError read file ['name', 'description']

    A registered tool is not changed in place (its ``input_schema`` is a plain dict): what is
    indexed is made from the tool at each build, so register a changed definition instead
    (``register(tool, replace=True)``), which moves the catalogue's generation.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=False)

    if not TYPE_CHECKING:  # mypy keeps pydantic's own signatures (the fields as arguments)

        def __init__(self, /, **data: Any) -> None:
            try:
                super().__init__(**data)
            except ValidationError as exc:
                raise definition_error(exc, data.get("name")) from None

        # Validation is still pydantic's own: this only renames its error. Marked as the base
        # ``__init__`` so pydantic does not route ``model_validate`` (and registration from a
        # mapping) through it, which would wrap this ValueError in a ValidationError again.
        __init__.__pydantic_base_init__ = True

        @classmethod
        def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Tool:
            """Pydantic's ``model_validate``; a bad field is a ``ToolDefinitionError``."""
            try:
                return super().model_validate(obj, *args, **kwargs)
            except ValidationError as exc:
                raise definition_error(exc, _name_in(obj)) from None

        @classmethod
        def model_validate_json(cls, json_data: Any, *args: Any, **kwargs: Any) -> Tool:
            """Pydantic's ``model_validate_json``; a bad field is a ``ToolDefinitionError``."""
            try:
                return super().model_validate_json(json_data, *args, **kwargs)
            except ValidationError as exc:
                raise definition_error(exc, _name_in_json(json_data)) from None

    name: str = Field(description="Unique name, MCP rule: 1-128 of [A-Za-z0-9_.-].")
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)
    input_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}},
        description="JSON Schema of the arguments; an object schema.",
    )
    search_hint: str = Field(default="", max_length=4096, description="Extra words to find it by.")
    group: str | None = Field(default=None, description="The group the tool belongs to.")
    always_load: bool = Field(default=False, description="Never held back.")
    read_only: bool | None = Field(
        default=None,
        description="The server's word that the tool only reads (MCP readOnlyHint); None: unsaid.",
    )

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not TOOL_NAME_PATTERN.fullmatch(value):
            raise ValueError(
                "must be 1 to 128 characters of letters, digits, '_', '-' or '.' (MCP's rule)"
            )
        return value

    @field_validator("description", "search_hint")
    @classmethod
    def _visible(cls, value: str) -> str:
        """What a reader sees is what the model gets: invisible characters removed."""
        return strip_invisible(value)

    @field_validator("input_schema")
    @classmethod
    def _check_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        kind = value.get("type", "object")
        if kind != "object":
            raise ValueError(f"must be a JSON Schema of type 'object', not {kind!r}")
        props = value.get("properties", {})
        if not isinstance(props, Mapping):
            raise ValueError("'properties' must be an object")
        required = value.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise ValueError("'required' must be a list of property names")
        return _copy_schema(value)

    @field_validator("group")
    @classmethod
    def _check_group(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", value):
            raise ValueError("must be None or 1 to 64 letters, digits, '_', '-' or '.'")
        return value


#: The native core's copy of plain JSON data (``None`` on the pure engine).
_NATIVE_COPY = getattr(native_module(), "copy_json", None)


def copy_data(value: Any) -> Any:
    """A private deep copy of schema data, made by ``pickle`` in C rather than ``deepcopy``.

    On the native engine a dict or list of plain JSON data is copied in Rust first (new
    dicts and lists, the same immutable leaves, shared parts kept shared: about half the
    round trip's time); what it declines (other types, a key that is no ``str``, nesting past
    192 levels) takes the path below.

    ``copy.deepcopy`` took three quarters of registering a tool from a mapping. A pickle
    round trip keeps exact types as ``deepcopy`` does (an array stays an array; ``marshal``
    would turn it into bytes), keeps shared parts shared, and is about three times faster on
    real schemas. Nesting too deep to copy is a ``ValueError``: caught when the tool is
    registered, it can never fail a request later. An object pickle cannot take goes to
    ``deepcopy``.
    """
    if _NATIVE_COPY is not None and (type(value) is dict or type(value) is list):
        copied = _NATIVE_COPY(value)
        if copied is not None:
            return copied
    try:
        return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    except RecursionError:
        raise ValueError("is nested too deeply to copy or send as JSON") from None
    except (pickle.PicklingError, TypeError, AttributeError):
        return copy.deepcopy(value)


def _copy_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A private copy of a tool's schema, so that later changes to the host's dict miss it.

    Refused (``ValueError`` naming the path) unless it can be sent as standard JSON: the
    native copy checks that on its way and declines what fails; the rest is walked here.
    """
    if _NATIVE_COPY is not None and type(schema) is dict:
        copied: dict[str, Any] | None = _NATIVE_COPY(schema)
        if copied is not None:
            return copied
    problem = json_problem(schema)
    if problem is not None:
        raise ValueError(f"cannot be sent as JSON: {problem}")
    plain: dict[str, Any] = copy_data(schema)
    return plain


def tool_from_mapping(data: Any, *, where: str = "") -> Tool:
    """Validate a plain mapping as a :class:`Tool`; errors name the tool and the field."""
    place = f" ({where})" if where else ""
    if not isinstance(data, Mapping):
        raise ToolDefinitionError(
            f"tool definition{place} must be an object, got {type(data).__name__}"
        )
    try:
        return _VALIDATE(dict(data))
    except ValidationError as exc:
        raise definition_error(exc, data.get("name"), where=where) from None


#: pydantic's own validation of a tool, which raises its ``ValidationError``.
_VALIDATE = super(Tool, Tool).model_validate

#: Longest name quoted whole in an error; a longer one (it is already refused) is cut.
_SHOWN_NAME_CHARS = 128


def definition_error(exc: ValidationError, name: object, *, where: str = "") -> ToolDefinitionError:
    """The project's error for pydantic's: the tool (``name`` if a string) and each bad field.

    The message is ``tool 'x' (where): field 'f': reason; field 'g': reason``, with no
    pydantic link and no input value (a bad description may be a megabyte long). A fault of
    the whole input (not an object, JSON that does not parse) has no field: ``a tool: reason``.
    """
    if isinstance(name, str):
        cut = name if len(name) <= _SHOWN_NAME_CHARS else name[:_SHOWN_NAME_CHARS] + "..."
        shown = f"tool {cut!r}"
    else:
        shown = "a tool"
    place = f" ({where})" if where else ""
    problems = tuple(
        (".".join(str(p) for p in error["loc"]), _reason(error["msg"]))
        for error in exc.errors(include_url=False, include_input=False)
    )
    said = "; ".join(f"field {f!r}: {reason}" if f else reason for f, reason in problems)
    fields = [f for f, _ in problems if f]
    return ToolDefinitionError(
        f"{shown}{place}: {said}",
        tool=name if isinstance(name, str) else None,
        field=fields[0] if fields else None,
        problems=problems,
    )


def _reason(msg: str) -> str:
    """A validator's own words, without the ``Value error, `` pydantic puts before them."""
    return msg.removeprefix("Value error, ")


def _name_in(obj: Any) -> object:
    """The ``name`` of what was given to validate, if it has one that can be read safely."""
    if isinstance(obj, Mapping):
        try:
            return obj.get("name")
        except Exception:  # a hostile mapping: the tool is then "a tool"
            return None
    return getattr(obj, "name", None) if isinstance(obj, BaseModel) else None


def _name_in_json(data: Any) -> object:
    """The ``name`` in a JSON text that failed validation, if it parses to an object."""
    try:
        parsed = json.loads(data)
    except (TypeError, ValueError, RecursionError):
        return None
    return parsed.get("name") if isinstance(parsed, dict) else None


class FieldValues(BaseModel):
    """One number per indexed field, in the fixed field order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: float
    search_hint: float
    summary: float
    body: float
    params: float

    def as_tuple(self) -> tuple[float, float, float, float, float]:
        """The values in field order: name, search_hint, summary, body, params."""
        return (self.name, self.search_hint, self.summary, self.body, self.params)


#: The learned field's default weight and ``b`` (chosen by cross-validation, docs/quality.md).
LEARNED_WEIGHT = 0.15
LEARNED_B = 0.0
#: The read-only boost of a question (chosen by cross-validation, docs/quality.md).
QUESTION_WEIGHT = 0.3


def _weights() -> FieldValues:
    return FieldValues(name=5.0, search_hint=2.5, summary=1.25, body=0.4, params=0.55)


def _bs() -> FieldValues:
    return FieldValues(name=0.5, search_hint=0.5, summary=0.5, body=0.6, params=0.6)


#: The largest weight, ``k1`` or factor a ``RetrievalSettings`` takes. Far past any useful
#: value, and far from the float range: at 1e308 every score of a search became infinite and
#: the ranking fell back to name order.
SETTING_MAX = 1_000_000.0


class RetrievalSettings(BaseModel):
    """BM25F settings: field weights, length normalisation ``b``, ``k1``, expansion, mentions.

    Frozen and hashable, so an index caches one table of saturated weights per value.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    weights: FieldValues = Field(default_factory=_weights)
    b: FieldValues = Field(default_factory=_bs)
    k1: float = Field(default=2.0, gt=0.0, le=SETTING_MAX, allow_inf_nan=False)
    expansion_weight: float = Field(default=1.0, ge=0.0, le=SETTING_MAX, allow_inf_nan=False)
    #: A mentioned group's hits score ``(1 + mention_weight)`` times their BM25F score
    #: (``docs/analysis.md`` §8); 0 turns mentions off. Not an engine argument.
    mention_weight: float = Field(default=0.5, ge=0.0, le=SETTING_MAX, allow_inf_nan=False)
    #: A question's read-only hits score ``(1 + question_weight)`` times their BM25F score
    #: (``docs/analysis.md`` §10, ``questions.py``); 0 turns it off. Not an engine argument.
    question_weight: float = Field(
        default=QUESTION_WEIGHT, ge=0.0, le=SETTING_MAX, allow_inf_nan=False
    )
    #: The BM25F weight and ``b`` of the learned field (the requests ``registry.learn`` was
    #: given, docs/analysis.md §9); with nothing learned the field is empty and scores 0.
    learned_weight: float = Field(
        default=LEARNED_WEIGHT, ge=0.0, le=SETTING_MAX, allow_inf_nan=False
    )
    learned_b: float = Field(default=LEARNED_B, ge=0.0, le=1.0, allow_inf_nan=False)

    @field_validator("weights")
    @classmethod
    def _check_weights(cls, value: FieldValues) -> FieldValues:
        for fname, w in zip(FIELD_NAMES, value.as_tuple()):
            if not 0.0 <= w <= SETTING_MAX:
                raise ValueError(
                    f"weight of {fname} must be within [0, {SETTING_MAX:g}], got {w!r}"
                )
        return value

    @field_validator("b")
    @classmethod
    def _check_b(cls, value: FieldValues) -> FieldValues:
        for fname, x in zip(FIELD_NAMES, value.as_tuple()):
            if not 0.0 <= x <= 1.0:
                raise ValueError(f"b of {fname} must be within [0, 1], got {x!r}")
        return value


#: Per-field values in the engines' order: the five of ``FieldValues``, then learned.
PerField = tuple[float, float, float, float, float, float]
ScoringArgs = tuple[PerField, PerField, float, float]
_ARGS: dict[int, tuple[RetrievalSettings, ScoringArgs]] = {}


def scoring_args(settings: RetrievalSettings) -> ScoringArgs:
    """The settings as the engines take them (weights, b, k1, expansion), cached per object."""
    found = _ARGS.get(id(settings))
    if found is not None and found[0] is settings:
        return found[1]
    args: ScoringArgs = (
        (*settings.weights.as_tuple(), settings.learned_weight),
        (*settings.b.as_tuple(), settings.learned_b),
        settings.k1,
        settings.expansion_weight,
    )
    if len(_ARGS) > 256:
        _ARGS.clear()
    _ARGS[id(settings)] = (settings, args)
    return args


@dataclass(frozen=True)
class TermContribution:
    """What one query term added to a hit's score, field by field."""

    term: str
    query_weight: float
    fields: dict[str, float] = field(hash=False)

    @property
    def total(self) -> float:
        """The term's whole contribution."""
        return sum(self.fields.values())


class SearchHit(NamedTuple):
    """One search result: the tool's name, its score and rank, and how it was found.

    A named tuple: hits are built on every search, and a tuple costs a fraction of a class.
    """

    name: str
    score: float
    rank: int
    fallback: bool = False
    explanation: tuple[TermContribution, ...] | None = None
