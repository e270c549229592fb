"""The command's template expansion (cli/runfiles.py: where `run` looks for
the files the library will write) against the shared table of cases that
the library's own expansion is tested against too (test/unit/
test_template.c): both sides must agree, case by case."""

import os

import pytest

from traceprof.cli.runfiles import launcher_vars, run_name, template_glob

NUMBERS = {"rank": "3", "local_rank": "1", "world_size": "16", "local_world_size": "8",
           "node_rank": "2", "pid": "4242", "step": "17", "batch": "17"}


def cases():
    path = os.path.join(os.path.dirname(__file__), "..", "data", "template_cases.tsv")
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            assert len(cols) == 4, "template_cases.tsv:%d: 4 columns, not %d" % (n, len(cols))
            out.append(pytest.param(*cols, id="%d:%s" % (n, cols[2])))
    return out


@pytest.mark.parametrize("run_name, hostname, tmpl, want", cases())
def test_shared_table(run_name, hostname, tmpl, want):
    known = dict(NUMBERS, run_name=run_name, hostname=hostname)
    got = template_glob(tmpl, known, for_display=True)
    if want == "ERROR":
        assert got is None, "the library refuses %r; the command expanded it to %r" % (tmpl, got)
    else:
        assert got == want


def test_unknown_values_become_wildcards():
    # The glob form: what is not known before the program runs matches
    # anything, known values are escaped for glob.
    known = {"run_name": "a[1]", "rank": "0"}
    assert template_glob("out/{run_name}/{pid}", known) == "out/a[[]1]/*"
    assert template_glob("out/{run_name}/{pid}", known, for_display=True) == "out/a[1]/{pid}"
    assert template_glob("{{x}}", {}) == "[{]x[}]"


@pytest.mark.parametrize("env, want", [
    ({}, ("0", "0", "1", "1", "0")),
    ({"RANK": "5", "LOCAL_RANK": "1", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4"},
     ("5", "1", "8", "4", "1")),
    ({"RANK": "5", "LOCAL_RANK": "1", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4",
      "GROUP_RANK": "3"}, ("5", "1", "8", "4", "3")),
    ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4"}, ("2", "0", "4", "1", "0")),
    ({"SLURM_PROCID": "7", "SLURM_LOCALID": "3", "SLURM_NTASKS": "8",
      "SLURM_NTASKS_PER_NODE": "4", "SLURM_NODEID": "1"}, ("7", "3", "8", "4", "1")),
    # torchrun's variables win over Slurm's.
    ({"RANK": "1", "SLURM_PROCID": "7"}, ("1", "0", "1", "1", "0")),
])
def test_launcher_vars(env, want):
    v = launcher_vars(env)
    assert (v["rank"], v["local_rank"], v["world_size"], v["local_world_size"],
            v["node_rank"]) == want


@pytest.mark.parametrize("env, want", [
    # The cases of test/unit/test_template.c's test_env_torchrun: the same
    # order (scripts/layout.spec's RUN_NAME_VARS) on both sides.
    ({"TORCHELASTIC_RUN_ID": "job-abc", "SLURM_JOB_ID": "12345"}, "job-abc"),
    ({"TORCHELASTIC_RUN_ID": "none", "SLURM_JOB_ID": "12345"}, "12345"),
    ({"TORCHELASTIC_RUN_ID": "none"}, "prog"),
    ({"TORCHELASTIC_RUN_ID": "", "SLURM_JOB_ID": "12345"}, "12345"),
    ({"TRACEPROF_RUN_NAME": "override", "TORCHELASTIC_RUN_ID": "job-abc"}, "override"),
    ({"TRACEPROF_RUN_NAME": "", "SLURM_JOB_ID": "12345"}, "12345"),
    ({}, "prog"),
])
def test_run_name(env, want):
    assert run_name(env, "prog") == want


@pytest.mark.parametrize("env, want", [
    ({}, "prog"),
    ({"TORCHELASTIC_RUN_ID": "job1"}, "job1"),
    ({"TORCHELASTIC_RUN_ID": "none"}, "prog"),
    ({"TORCHELASTIC_RUN_ID": ""}, "prog"),
    # torchrun --standalone's, and torch 2.15's without --master_port: one
    # per launch, given to the workers only (issue 42 item 1).
    ({"TORCHELASTIC_RUN_ID": "07a29c41-71d6-4b8e-9f0a-d226471ea2cc"}, "prog"),
    ({"TORCHELASTIC_RUN_ID": "07A29C41-71D6-4B8E-9F0A-D226471EA2CC"}, "prog"),
    ({"TORCHELASTIC_RUN_ID": "07a29c41-71d6-4b8e-9f0a-d226471ea2cc-x"},
     "07a29c41-71d6-4b8e-9f0a-d226471ea2cc-x"),
    ({"TORCHELASTIC_RUN_ID": "07a29c4171d64b8e9f0ad226471ea2cc"}, "07a29c4171d64b8e9f0ad226471ea2cc"),
    ({"TORCHELASTIC_RUN_ID": "none", "SLURM_JOB_ID": "881"}, "881"),
    ({"TORCHELASTIC_RUN_ID": "07a29c41-71d6-4b8e-9f0a-d226471ea2cc", "SLURM_JOB_ID": ""}, "prog"),
    ({"TRACEPROF_RUN_NAME": "mine", "TORCHELASTIC_RUN_ID": "job1"}, "mine"),
])
def test_run_name_skips_placeholders(env, want):
    assert run_name(env, "prog") == want
