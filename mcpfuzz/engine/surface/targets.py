"""Call targets: what mcpfuzz calls with drawn params, how each kind is declared, and which ones are called."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from fnmatch import fnmatchcase
from pathlib import Path

from hypothesis import strategies as st

from mcpfuzz.engine.searches.search import database_key
from mcpfuzz.jsonrpc.frame import Case
from mcpfuzz.jsonrpc.parts.leniency import Lenient
from mcpfuzz.jsonrpc.target_kind import TargetKind
from mcpfuzz.strategies.arguments.call import ArgumentCall
from mcpfuzz.strategies.arguments.schema_prep import SchemaProblem
from mcpfuzz.strategies.arguments.schema_values import ArgumentSchema
from mcpfuzz.strategies.messages import FrameBuilder


class Safety(str, Enum):
    """What calling a target may do, from the server's own hints."""

    READ_ONLY = "read-only"
    UNKNOWN = "unknown"  # no hint either way: called (most servers annotate nothing)
    DESTRUCTIVE = "destructive"
    OPEN_WORLD = "open-world"

    @property
    def risky(self) -> bool:
        """Skipped unless the user names the target: it may destroy data or reach the network."""
        return self in (Safety.DESTRUCTIVE, Safety.OPEN_WORLD)


# The frame for one call of a target: (builder, target, drawn call, case family, history) -> Case.
CaseMaker = Callable[[FrameBuilder, "CallTarget", ArgumentCall, str, tuple[bytes, ...]], Case]
# Cases about a kind as a whole (a name no listing has), from the builder and the kind's targets.
KindCases = Callable[[FrameBuilder, list["CallTarget"]], list[Case]]


@dataclass(frozen=True)
class TargetType:
    """How one kind of target is declared by a server and called: the registration of a kind."""

    kind: TargetKind
    method: str  # the JSON-RPC method that calls it
    capability: str  # the server capability that declares the kind
    list_method: str | None  # where the server lists its declarations (every page is read); None: derived
    list_key: str  # the result member holding the declarations
    result_oracle: str  # the oracle that judges a successful result beyond the envelope
    schema: Callable[[dict], object]  # the JSON Schema its params are drawn from, taken from a declaration
    safety: Callable[[dict], Safety]
    make_case: CaseMaker
    option: str  # the command-line option that names one ("--include-tool"), for messages
    name_key: str = "name"  # the declaration member that names a target (`uri` for a resource)
    # Declarations made from other kinds' listings (completions: prompt arguments, template variables).
    derive: Callable[[dict[TargetKind, list[dict]]], list[dict]] | None = None
    # Deterministic calls in place of the schema's coverage calls, and the fuzz phase's draws in place of
    # the schema's; `fuzzed` False: nothing to search (a listed resource reads the same each time).
    coverage_calls: Callable[[dict], list[ArgumentCall]] | None = None
    fuzz_calls: Callable[[dict], st.SearchStrategy[ArgumentCall]] | None = None
    fuzzed: bool = True
    kind_cases: KindCases | None = None

    def name_of(self, declaration: dict) -> object:
        """The target's name in a declaration (a string, unless the server sent something else)."""
        return declaration.get(self.name_key)


TARGET_TYPES: dict[TargetKind, TargetType] = {}


def target_types() -> dict[TargetKind, TargetType]:
    """Every registered kind, with the built-in ones imported."""
    from mcpfuzz.engine.surface import target_kinds  # noqa: F401  (registers on import)

    return TARGET_TYPES


def register_target_type(target_type: TargetType) -> TargetType:
    """Make a kind of target known to the probe, the planner and every phase."""
    if target_type.kind in TARGET_TYPES:
        raise ValueError(f"target kind {target_type.kind.value!r} registered twice")
    TARGET_TYPES[target_type.kind] = target_type
    return target_type


@dataclass(frozen=True)
class PreparedTarget:
    """What a target's calls are drawn from: its schema, and its simplest valid arguments (plain, then with every
    listed property present)."""

    schema: ArgumentSchema
    plain: list[dict]
    populated: list[dict]


@dataclass(eq=False)
class CallTarget:
    """One target mcpfuzz calls: its declaration, and the schema its params are drawn from, prepared on first use.

    Preparing (the schema checked and compiled, its simplest values drawn: CPU work, milliseconds) happens once,
    in whichever thread asks first; another thread asking meanwhile waits for it, and targets of an equal schema
    share one preparation. Ask from a worker thread (the Hypothesis thread, or `anyio.to_thread`), not on the
    event loop; `prepare_targets` prepares a whole plan.
    """

    type: TargetType
    name: str
    declaration: dict
    safety: Safety = Safety.UNKNOWN
    seed: int = 0  # the run's seed: the draws that depend on one (coverage's array items) use it
    _prepared: PreparedTarget | SchemaProblem | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def prepare(self) -> PreparedTarget:
        """The target's schema and simplest values, prepared once; SchemaProblem when its params cannot be drawn."""
        prepared = self._prepared
        if prepared is None:
            with self._lock:
                prepared = self._prepared
                if prepared is None:
                    prepared = self._prepared = _prepare(self.type.schema(self.declaration), self.seed)
        if isinstance(prepared, SchemaProblem):
            raise prepared.with_traceback(None)  # one problem raised for every use: its traceback not piled up
        return prepared

    @property
    def prepared(self) -> bool:
        """Whether preparing is over (done, or found impossible): `prepare` then returns (or raises) at once."""
        return self._prepared is not None

    @property
    def schema(self) -> ArgumentSchema:
        """The schema its params are drawn from (prepares the target)."""
        return self.prepare().schema

    @property
    def plain(self) -> list[dict]:
        """[the simplest valid arguments] (prepares the target)."""
        return self.prepare().plain

    @property
    def populated(self) -> list[dict]:
        """[the simplest valid arguments with every listed property present] (prepares the target)."""
        return self.prepare().populated

    @property
    def kind(self) -> TargetKind:
        """The target's kind."""
        return self.type.kind

    @property
    def label(self) -> str:
        """The target's name in reports, the soak scheduler and corpus file names: `tool/NAME`."""
        return self.kind.label(self.name)

    @property
    def seed_name(self) -> str:
        """What names this target's searches in their seeds: a tool's bare name, as in earlier versions."""
        return self.name if self.kind is TargetKind.TOOL else self.label

    @property
    def tool(self) -> str | None:
        """The tool's name for a tool target (the JSON report's `tool` field), else None."""
        return self.name if self.kind is TargetKind.TOOL else None

    def case(self, builder: FrameBuilder, call: ArgumentCall, *, family: str | None = None,
             history: tuple[bytes, ...] = ()) -> Case:
        """The frame that calls this target with `call`'s params, and its expectation (a call may take long)."""
        case = self.type.make_case(builder, self, call, family or self.kind.value, history)
        # A call of a read-only target changes nothing another call sees: it may share a pipelined window.
        # A lone-surrogate call (lenient: a parser may refuse it) is a call too: its answer may take as long.
        return replace(case, slow_ok=case.patient or case.expect.has(Lenient),
                       shared_ok=self.safety is Safety.READ_ONLY)

    def database(self, root: Path | None, server: str) -> Path | None:
        """Server + target + schema: this target's Hypothesis example database (None without a corpus)."""
        if root is None:
            return None
        # A tool keeps the key of earlier versions (its name, not its label), so its saved examples still count.
        return root / database_key(server, self.seed_name, self.type.schema(self.declaration))


@dataclass
class TargetPlan:
    """The targets to call and the ones skipped (by label), each with its reason."""

    targets: list[CallTarget] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # The skipped targets left out only by the server's own risk hints (no option named them), with the hint:
    # mcpfuzz's choice, not the user's, so a run that calls nothing because of them says so (see verdict.py).
    risky: list[tuple[str, str]] = field(default_factory=list)

    def of_kind(self, kind: TargetKind) -> list[CallTarget]:
        """The targets of one kind, in order."""
        return [target for target in self.targets if target.kind is kind]


@dataclass(frozen=True)
class Selection:
    """`--include-target`/`--exclude-target` labels (`--include-tool NAME` is `tool/NAME`)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    read_only: bool = False  # --read-only: only targets annotated read-only (or named with an include option)
    typed: tuple[tuple[str, str], ...] = ()  # (label, the option the user typed for it), for warnings

    def includes(self, label: str) -> bool:
        """Whether an include label or glob (`tool/get_*`) names this target."""
        return any(fnmatchcase(label, pattern) for pattern in self.include)

    def excludes(self, label: str) -> bool:
        """Whether an exclude label or glob (`tool/*`) names this target."""
        return any(fnmatchcase(label, pattern) for pattern in self.exclude)

    def option_of(self, label: str, default: str) -> str:
        """The option the user typed for `label` (`--exclude-target`, not the `--exclude-tool` it became)."""
        return next((option for typed_label, option in self.typed if typed_label == label), default)


def skip_reason(target_type: TargetType, declaration: dict, selection: Selection) -> str | None:
    """Why a declared target is not called, or None. Only an explicit `true` risk hint skips."""
    name = target_type.name_of(declaration)
    if not isinstance(name, str):
        return f"it has no string {target_type.name_key}"
    label = target_type.kind.label(name)
    if selection.excludes(label):
        return target_type.option.replace("include", "exclude")
    if selection.includes(label):
        return None
    safety = target_type.safety(declaration)
    if selection.read_only and safety is not Safety.READ_ONLY:
        return f"--read-only, and it is not annotated readOnlyHint: true (name it with {target_type.option} to call it)"
    if safety.risky:
        return f"annotated {risk_hint(safety)}: true (name it with {target_type.option} to call it)"
    return None


def risk_hint(safety: Safety) -> str:
    """The annotation that makes a target risky."""
    return "destructiveHint" if safety is Safety.DESTRUCTIVE else "openWorldHint"


def skipped_for_its_hint(target_type: TargetType, declaration: dict, selection: Selection) -> bool:
    """Whether `skip_reason` skips this target for its risk hint alone (no option of the user's decided)."""
    label = target_type.kind.label(str(target_type.name_of(declaration)))
    return (not selection.excludes(label) and not selection.includes(label) and not selection.read_only
            and target_type.safety(declaration).risky)


def _held_with_its_tool(kind: TargetKind, name: str, held_back: dict[str, str], selection: Selection) -> str | None:
    """A prompt (or a completion of one) named like a tool that is not called is not called either, unless named."""
    if kind is TargetKind.COMPLETION and name.startswith("prompt:"):
        prompt = name.split(":", 2)[1]
    elif kind is TargetKind.PROMPT:
        prompt = name
    else:
        return None
    if prompt not in held_back or selection.includes(kind.label(name)):
        return None
    return (f"the tool {prompt!r} is not called ({held_back[prompt]}), and a prompt of its name may do what it "
            f"does; name it with --include-target {kind.label(name)} to call it")


def plan_targets(declared: dict[TargetKind, list[dict]], selection: Selection, *, seed: int) -> TargetPlan:
    """Select the targets to call: names, safety hints, the include and exclude options, prompts held back with
    their tool, duplicates. Nothing is drawn (each target prepares itself on first use, see `prepare_targets`):
    this takes microseconds per target and may run on the event loop."""
    plan = TargetPlan()
    # Tools first: a prompt named like a tool held back (excluded, or annotated as risky) may do what the tool
    # does (mcp-server-fetch's `fetch` prompt fetches its URL), so it is held back with it.
    for kind, declarations in sorted(declared.items(), key=lambda item: item[0] is not TargetKind.TOOL):
        held_back = {label.partition("/")[2]: reason for label, reason in plan.skipped
                     if label.startswith(f"{TargetKind.TOOL.value}/")}
        _plan_kind(plan, target_types()[kind], declarations, selection, seed, held_back)
    return plan


def _plan_kind(plan: TargetPlan, target_type: TargetType, declarations: list[dict], selection: Selection,
               seed: int, held_back: dict[str, str] | None = None) -> None:
    kind, prefix = target_type.kind, f"{target_type.kind.value}/"
    listed = {str(target_type.name_of(declaration)) for declaration in declarations}
    for option, labels in ((target_type.option, selection.include),
                           (target_type.option.replace("include", "exclude"), selection.exclude)):
        for label in labels:
            if label.startswith(prefix) and not any(fnmatchcase(name, label.removeprefix(prefix)) for name in listed):
                typed = selection.option_of(label, option)
                shown = label if typed.endswith("-target") else label.removeprefix(prefix)
                plan.warnings.append(f"{typed} {shown!r} names no {kind.value} of this "
                                     f"server; its {kind.value}s are {', '.join(sorted(listed)) or '(none)'}")
    seen: set[str] = set()
    for declaration in declarations:
        reason = skip_reason(target_type, declaration, selection)
        name = str(target_type.name_of(declaration))
        if reason is None and held_back:
            reason = _held_with_its_tool(kind, name, held_back, selection)
        if reason is None and name in seen:
            reason = "listed twice; the first listing is fuzzed"
        if reason is not None:
            plan.skipped.append((prefix + name, reason))
            if skipped_for_its_hint(target_type, declaration, selection):
                plan.risky.append((prefix + name, risk_hint(target_type.safety(declaration))))
            continue
        seen.add(name)
        if not isinstance(target_type.schema(declaration), dict):
            plan.skipped.append((prefix + name, "it has no object inputSchema" if kind is TargetKind.TOOL
                                 else "its params cannot be drawn"))
            continue
        plan.targets.append(CallTarget(target_type, name, declaration, target_type.safety(declaration), seed))


# Preparations kept by schema and seed: a server may declare one schema for thousands of targets, which then
# share one preparation (strategies are pure descriptions; the values drawn from one seed are the same).
SHARED_PREPARATIONS = 1024
_shared: OrderedDict[str, PreparedTarget | SchemaProblem] = OrderedDict()
_shared_lock = threading.Lock()


def _prepare(schema: object, seed: int) -> PreparedTarget | SchemaProblem:
    """A target's schema checked and compiled and its simplest values drawn, or why that is impossible; the same
    object for every target of an equal schema (prepared once while it stays among the last SHARED_PREPARATIONS)."""
    try:
        key = json.dumps([seed, schema], sort_keys=True)
    except (TypeError, ValueError):
        return _prepared_anew(schema, seed)
    with _shared_lock:
        known = _shared.get(key)
        if known is not None:
            _shared.move_to_end(key)
            return known
    prepared = _prepared_anew(schema, seed)
    with _shared_lock:
        prepared = _shared.setdefault(key, prepared)  # another thread's, had it prepared the same meanwhile
        if len(_shared) > SHARED_PREPARATIONS:
            _shared.popitem(last=False)
    return prepared


def _prepared_anew(schema: object, seed: int) -> PreparedTarget | SchemaProblem:
    try:
        arguments = ArgumentSchema(schema)
        plain, populated = arguments.preflight(seed)
    except SchemaProblem as problem:
        return problem
    return PreparedTarget(arguments, plain, populated)


def prepare_targets(plan: TargetPlan, *, check_cancelled: Callable[[], None] = lambda: None) -> TargetPlan:
    """Every target of `plan` prepared, in order (CPU work: run it off the event loop); the plan to call: the
    targets whose params can be drawn, the others skipped with their reason and a warning that says how to fix it.

    There is no time limit: a target takes milliseconds, a deep schema seconds (its draws are bounded by their
    size, see `ArgumentSchema.preflight`). `check_cancelled` (Ctrl-C, SIGTERM, the end of
    --budget) is called before each target and stops preparing by raising.
    """
    ready = TargetPlan(skipped=list(plan.skipped), warnings=list(plan.warnings), risky=list(plan.risky))
    for target in plan.targets:
        check_cancelled()
        try:
            target.prepare()
        except SchemaProblem as problem:
            ready.skipped.append((target.label, f"cannot draw arguments: `{problem.keyword}`"))
            ready.warnings.append(f"{target.kind.value} {target.name!r}: {problem.message} (keyword "
                                  f"`{problem.keyword}`); tip: {problem.tip}")
            continue
        ready.targets.append(target)
    return ready
