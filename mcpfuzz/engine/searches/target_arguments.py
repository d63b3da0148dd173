"""Each target's deterministic calls, made once and shared by the searches: the user's arguments (--args), the
boundaries and single-rule breaks of its schema, the payloads that fit it, and the words the server declared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcpfuzz.engine.surface.targets import CallTarget, PreparedTarget
from mcpfuzz.strategies.arguments.call import POSITIVE, ArgumentCall
from mcpfuzz.strategies.arguments.coverage import coverage_calls
from mcpfuzz.strategies.arguments.dictionary import Dictionary
from mcpfuzz.strategies.arguments.schema_prep import SchemaProblem
from mcpfuzz.strategies.arguments.seeds import SCHEMA_SEED, seed_strings
from mcpfuzz.strategies.payloads.calls import payload_calls
from mcpfuzz.strategies.payloads.canaries import CanaryLayout

GIVEN = "given in --args"  # the description of a call whose arguments the user gave


class TargetArguments:
    """The calls each target has before any search draws one, each made on first use (CPU work: off the loop)."""

    def __init__(self, targets: list[CallTarget], known_arguments: Mapping[str, Sequence[dict]] | None,
                 canaries: CanaryLayout | None, *, strict_types: bool) -> None:
        self.targets = targets
        self.known_arguments = dict(known_arguments or {})  # target label -> argument objects the user knows work
        self.refused_arguments: list[str] = []  # why some of those were left out (the schema refuses them)
        self.canaries = canaries  # --security: where path payloads aim and shell payloads leave their files
        self.strict_types = strict_types
        # Strings the server declared, and returned to coverage calls: fed into the fuzz phase's string draws. Only
        # coverage results are added: the fuzz phase's own calls depend on time, and a later target's draws must not.
        self.dictionary = Dictionary()
        self._declared_words = False
        self._accepted_arguments: dict[str, list[ArgumentCall]] = {}  # label -> the ones its schema accepts
        self._covering: dict[str, list[ArgumentCall]] = {}  # target label -> its coverage calls, made on first use
        # Targets of an equal schema share one preparation, and so one list of schema coverage calls.
        self._schema_covering: dict[int, tuple[PreparedTarget, list[ArgumentCall]]] = {}

    def coverage_of(self, target: CallTarget) -> list[ArgumentCall]:
        """A target's coverage calls, made once: its kind's own, or the boundaries and single-rule breaks of its
        schema (each validated against it; CPU work, off the event loop)."""
        calls = self._covering.get(target.label)
        if calls is None:
            calls = self._covering[target.label] = self._with_payloads(target, self._make_coverage(target))
        return calls

    def _with_payloads(self, target: CallTarget, calls: list[ArgumentCall]) -> list[ArgumentCall]:
        """The coverage calls with the payloads that fit the target's properties by meaning (paths, expressions,
        ...): first under --security, whose oracles judge them, else last. The fuzz phase draws them again."""
        if target.type.coverage_calls is not None:
            return calls
        prepared = target.prepare()
        payloads = payload_calls(prepared.schema, [*prepared.populated, *prepared.plain], self.canaries, target.label)
        return [*payloads, *calls] if self.canaries is not None else [*calls, *payloads]

    def _make_coverage(self, target: CallTarget) -> list[ArgumentCall]:
        """The user's arguments for the target first (--args), then its kind's own calls or its schema's."""
        if target.type.coverage_calls is not None:
            return [*self.given(target), *target.type.coverage_calls(target.declaration)]
        prepared = target.prepare()
        shared = self._schema_covering.get(id(prepared))
        if shared is None or shared[0] is not prepared:
            shared = self._schema_covering[id(prepared)] = (prepared, coverage_calls(
                prepared.schema, prepared.plain, prepared.populated, seed=target.seed, strict_types=self.strict_types))
        return [*self.given(target), *shared[1]]

    def given(self, target: CallTarget) -> list[ArgumentCall]:
        """The argument objects --args gave for the target that its schema accepts (the others said once)."""
        accepted = self._accepted_arguments.get(target.label)
        if accepted is None:
            accepted = self._accepted_arguments[target.label] = self._accepted(target)
        return accepted

    def _accepted(self, target: CallTarget) -> list[ArgumentCall]:
        given = self.known_arguments.get(target.label) or ()
        calls = []
        for number, arguments in enumerate(given, 1):
            if target.schema.is_valid(arguments):
                calls.append(ArgumentCall(POSITIVE, arguments, f"{GIVEN} (#{number})"))
            else:
                errors = target.schema.errors(arguments)
                why = errors[0].message if errors else "not an object"
                self.refused_arguments.append(f"--args: {target.label} #{number} left out, its schema refuses it: "
                                              f"{why[:200]}")
        return calls

    def seeds(self, target: CallTarget) -> list[ArgumentCall]:
        """The calls a fuzz draw may start from: the user's arguments and the schema's seeds."""
        return [call for call in self.coverage_of(target)
                if call.description.startswith((GIVEN, SCHEMA_SEED))]

    def words(self) -> tuple[str, ...]:
        """The dictionary's words now, the targets' names, URIs and schema values added on first use."""
        if not self._declared_words:
            self._declared_words = True
            for target in self.targets:
                uri = target.declaration.get("uri") if isinstance(target.declaration, dict) else None
                self.dictionary.add([target.name, *([uri] if isinstance(uri, str) else [])])
                try:
                    self.dictionary.add(seed_strings(target.schema))
                except SchemaProblem:
                    continue
        return self.dictionary.words
