"""The plans: which phases a run executes, in order. A run, a plain JSON-RPC run and a worker differ only here."""

from __future__ import annotations

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.plan.auth_phases import AuthPhase
from mcpfuzz.engine.plan.client_phases import ClientPhase, WatchAskingPhase
from mcpfuzz.engine.plan.flight_phases import FlightPhase, WatchLatenciesPhase
from mcpfuzz.engine.plan.isolation_phases import IsolationPhase
from mcpfuzz.engine.plan.phase import Plan
from mcpfuzz.engine.plan.plain_phases import PlainCataloguePhase, PlainProbePhase
from mcpfuzz.engine.plan.protocol_phases import (
    BaselineReplayPhase,
    CataloguePhase,
    LifecyclePhase,
    LintPhase,
    ProbePhase,
    RegressionPhase,
    VerifySoFarPhase,
)
from mcpfuzz.engine.plan.target_phases import (
    CoveragePhase,
    FuzzPhase,
    PlanTargetsPhase,
    StatefulPhase,
    TargetsReadyPhase,
)
from mcpfuzz.engine.plan.task_phases import TasksPhase

# What is done once per run, after the probe and before the calls (the soak runs it once per soak).
PROTOCOL_PHASES: Plan = (LintPhase(), RegressionPhase(), BaselineReplayPhase(), CataloguePhase(), AuthPhase(),
                         IsolationPhase(), LifecyclePhase(), VerifySoFarPhase())
# The targets are selected right after the probe and prepared in the background until the call phases need them;
# the latencies the call phases measure choose the calls the flight phase cancels in flight, and the tools they see
# asking for input are the client phase's.
TARGET_PHASES: Plan = (TargetsReadyPhase(), CoveragePhase(), FuzzPhase(), StatefulPhase())
RUN_PLAN: Plan = (ProbePhase(), PlanTargetsPhase(), *PROTOCOL_PHASES, WatchLatenciesPhase(), WatchAskingPhase(),
                  *TARGET_PHASES, TasksPhase(), FlightPhase(), ClientPhase())
# A worker of `run --workers N` other than the lead only searches: the rest is the lead's, once per run.
WORKER_PLAN: Plan = (ProbePhase(), PlanTargetsPhase(), TargetsReadyPhase(), FuzzPhase(), StatefulPhase())
JSONRPC_PLAN: Plan = (PlainProbePhase(), PlanTargetsPhase(), RegressionPhase(), PlainCataloguePhase(), *TARGET_PHASES)


def plan_for(config: RunConfig) -> Plan:
    """The plan `mcpfuzz run` executes for this configuration."""
    if config.jsonrpc_methods is not None:
        return JSONRPC_PLAN
    return RUN_PLAN if config.shard.lead else WORKER_PLAN
