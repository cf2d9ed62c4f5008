"""One vocabulary across the ndpsim command line: every command's options, found by walking the
Typer app, use the shared names, short flags and value words of ``ndpsim.cli.options``; help
texts list the values the registries accept and say each default; no ``<type>`` labels; a
retired name still works, hidden, with a warning; ``--json -`` keeps standard output JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import typer
from typer.core import TyperArgument, TyperGroup
from typer.testing import CliRunner

from ndpsim.analysis.passes import OFFLOAD_PASSES
from ndpsim.analysis.tom import BLOCK_RULES
from ndpsim.cli.main import app
from ndpsim.cli.options import RETIRED, VOCABULARY
from ndpsim.experiments.paper import papers
from ndpsim.hw.dram.spec import dram_preset_names
from ndpsim.systems import system_preset_names
from ndpsim.workloads import SIZES, workload_names

runner = CliRunner()
WIDE = {"COLUMNS": "200"}


def _commands(command=None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], object]]:
    """(path, command) for every command and group of the app, the root first."""
    if command is None:
        command = typer.main.get_command(app)
        command.load_all()  # the root imports a command's module on first use
    yield path, command
    if isinstance(command, TyperGroup):
        for name, sub in sorted(command.commands.items()):
            yield from _commands(sub, (*path, name))


COMMANDS = list(_commands())
LEAVES = [(path, c) for path, c in COMMANDS if not isinstance(c, TyperGroup)]
IDS = [" ".join(path) or "ndpsim" for path, _ in COMMANDS]


def _options(command) -> list:
    return [p for p in command.params if not isinstance(p, TyperArgument)]


def _long(param) -> str:
    (name,) = [o for o in param.opts if o.startswith("--")]
    return name


def _shorts(param) -> list[str]:
    return [o for o in param.opts if not o.startswith("--")]


def test_the_walk_finds_every_command():
    found = {" ".join(path) for path, _ in LEAVES}
    papers_commands = {f"reproduce {name}" for name in papers()}
    assert {"run", "systems", "analyze", "dram-trace", "workloads run", "workloads list",
            "sweep", "results"} <= found  # fmt: skip
    assert papers_commands <= found


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=[" ".join(p) for p, _ in LEAVES])
def test_a_shared_option_has_the_same_name_short_flag_and_value_word_everywhere(path, command):
    for param in _options(command):
        name = _long(param)
        if name in VOCABULARY:
            short, metavar = VOCABULARY[name]
            assert _shorts(param) == ([short] if short else []), (path, name)
            assert param.metavar == metavar, (path, name)


def test_a_short_flag_means_one_option_everywhere():
    meaning: dict[str, set[str]] = {}
    for _, command in LEAVES:
        for param in _options(command):
            for short in _shorts(param):
                # a concept's singular and plural (--workload, --workloads) share its flag
                meaning.setdefault(short, set()).add(_long(param).removesuffix("s"))
    assert all(len(longs) == 1 for longs in meaning.values()), meaning
    assert meaning.get("-k", {"--kernel"}) == {"--kernel"}
    assert meaning["-w"] == {"--workload"} and meaning["-s"] == {"--size"}


def test_a_retired_name_is_hidden_and_nothing_else_is_named_like_it():
    for _, command in LEAVES:
        for param in _options(command):
            if _long(param) in RETIRED:
                assert param.hidden
            else:
                assert not set(param.opts) & set(RETIRED)


@pytest.mark.parametrize(
    ("args", "new"),
    [
        (["workloads", "run", "--only", "nope"], "--workloads"),
        (["reproduce", "tom", "--variants", "ctrl-xmap"], "--systems"),
    ],
)
def test_a_retired_name_still_works_with_a_warning(args, new):
    result = runner.invoke(app, args, env=WIDE)
    assert result.exit_code == 2, result.output  # the value reached the command: it is unknown
    assert f"warning: {args[2]} is deprecated; use {new}" in result.stderr
    assert "nope" in result.output or "ctrl-xmap" in result.output


def test_a_retired_name_and_its_new_name_together_are_refused():
    result = runner.invoke(app, ["reproduce", "tom", "--variants", "ideal", "--systems", "ideal"])
    assert result.exit_code == 2
    assert "--variants is the old name of --systems; give --systems only" in result.output


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_help_names_values_by_a_word_never_a_type_label(path, command):
    result = runner.invoke(app, [*path, "--help"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "<" not in result.output, result.output
    for param in _options(command):
        if not param.hidden:
            assert param.help, (path, _long(param))
            if not param.is_flag:
                assert f"{_long(param)} " in result.output and param.metavar in result.output


def _accepted(path: tuple[str, ...], option: str) -> list[str] | None:
    """What the registries say ``option`` of the command at ``path`` accepts, if they do."""
    if path[0] == "reproduce" and option == "--systems":
        return list(papers()[path[1]].variant_names)
    if path[0] == "reproduce":
        switch = {s.option: s for s in papers()[path[1]].switches}.get(option)
        if switch is not None:
            return [str(choice) for choice in switch.choices]
    return {
        "--size": list(SIZES),
        "--workload": workload_names(),
        "--workloads": workload_names(),
        "--system": system_preset_names(),
        "--preset": dram_preset_names(),
        "--pass": OFFLOAD_PASSES.names(),
        "--blocks": list(BLOCK_RULES),
    }.get(option)


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=[" ".join(p) for p, _ in LEAVES])
def test_help_lists_the_values_each_option_accepts(path, command):
    for param in _options(command):
        if param.hidden:
            continue
        for value in _accepted(path, _long(param)) or []:
            assert value in param.help, (path, _long(param), value)


def test_help_lists_the_papers_and_the_presets_to_show():
    reproduce = runner.invoke(app, ["reproduce", "--help"], env=WIDE)
    assert all(name in reproduce.output for name in papers())
    systems = dict(COMMANDS)[("systems",)]
    (preset,) = [p for p in systems.params if isinstance(p, TyperArgument)]
    assert all(name in preset.help for name in system_preset_names())


@pytest.mark.parametrize(("path", "command"), LEAVES, ids=[" ".join(p) for p, _ in LEAVES])
def test_every_option_says_its_default(path, command):
    for param in _options(command):
        if param.hidden or param.is_flag or param.required:
            continue
        shown = param.default not in (None, [], ()) and param.show_default is not False
        assert shown or "default" in param.help, (path, _long(param))


def _stdout_is_only_json(args: list[str]) -> dict:
    result = runner.invoke(app, [*args, "--json", "-"], env=WIDE)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # the tables and progress lines went to stderr


def test_json_dash_prints_the_document_alone_on_standard_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    trace = tmp_path / "t.ldst"
    trace.write_text("".join(f"LD {64 * i:#x}\n" for i in range(64)))
    figures = _stdout_is_only_json(["dram-trace", str(trace)])
    assert figures["requests"] == 64
    table = _stdout_is_only_json(["workloads", "run", "--size", "tiny", "-w", "vadd"])
    assert [row["workload"] for row in table["workloads"]] == ["vadd"]
    run = _stdout_is_only_json(["run", "--system", "gpu-baseline", "-w", "vadd", "-s", "tiny"])
    assert run["workload"] == "vadd" and run["stats"]["sm"]["total"]["warp_instructions"] > 0
    assert list(tmp_path.iterdir()) == [trace]  # no file named "-", no default file
