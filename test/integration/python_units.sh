#!/usr/bin/env bash
# The command's Python unit tests (test/python/test_*.py, issue 33 item 3),
# with pytest from PyPI in the torch venv (scripts/install-deps
# --with-optional installs it): option parsing and run's argument
# splitting, template expansion against the table the library is tested
# against too (test/data/template_cases.tsv), the readers on hand-made
# traces, merge's clock shift, summary's tables, and the Marker API.  The
# package is imported from the source tree (test/python/pytest.ini's
# pythonpath); no __pycache__ or .pytest_cache is written there.  It runs
# the tests marked torchvenv (pyarrow, numpy, torch).  `make check-python`
# runs the others in the small pytest venv, first in `make check`; only
# where that venv is missing (check-python said SKIP) are they run here too.
. "$TP_TOP/test/lib/common.sh"
need_venv torch 'import pytest' "no pytest (scripts/install-deps --with-optional installs it)"
only=(-m torchvenv)
small=$(tp_venv_python pytest) && "$small" -c 'import pytest, hypothesis' 2>/dev/null || {
	echo "no pytest venv: the tests not marked torchvenv run here too"
	only=()
}
PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -p no:cacheprovider -q "${only[@]}" --basetemp="$TP_TMP/pytest" \
	--rootdir="$TP_TOP/test/python" "$TP_TOP/test/python" >pytest.txt 2>&1 || {
	tail -60 pytest.txt
	die "pytest failed"
}
tail -1 pytest.txt
# Every test file ran (a file that fails to import is an error above).
n=$(ls "$TP_TOP"/test/python/test_*.py | wc -l)
[ "$n" -ge 6 ] || die "only $n test files in test/python"
