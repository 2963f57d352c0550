"""Maintainers' investigation tools (tools/README.md): a sampling profiler and
a crash tracer for machines without perf or gdb, and a reproducer of
FlagGems' operand-layout bugs. Like tools.bench, this package must not import
torch_fl itself (under ``python -m`` torch_fl would read sys.argv[0] "-m" as
its own CLI)."""
