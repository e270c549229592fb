#!/usr/bin/env bash
# The command's Python unit tests (test/python/test_*.py, issue 33 item 3),
# with pytest from PyPI in the torch venv (scripts/install-deps
# --with-optional installs it): option parsing and run's argument
# splitting, template expansion against the table the library is tested
# against too (test/data/template_cases.tsv), the readers on hand-made
# traces, merge's clock shift, summary's tables, and the Marker API.  The
# package is imported from the source tree (test/python/pytest.ini's
# pythonpath); no __pycache__ or .pytest_cache is written there.  All of
# them, the tests marked torchvenv (pyarrow, numpy) included: `make
# check-python` runs the others in the small pytest venv.
. "$TP_TOP/test/lib/common.sh"
need_venv torch 'import pytest' "no pytest (scripts/install-deps --with-optional installs it)"
PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -p no:cacheprovider -q --basetemp="$TP_TMP/pytest" \
	--rootdir="$TP_TOP/test/python" "$TP_TOP/test/python" >pytest.txt 2>&1 || {
	tail -60 pytest.txt
	die "pytest failed"
}
tail -1 pytest.txt
# Every test file ran (a file that fails to import is an error above).
n=$(ls "$TP_TOP"/test/python/test_*.py | wc -l)
[ "$n" -ge 6 ] || die "only $n test files in test/python"
