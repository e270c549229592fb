"""import traceprof's Marker API (Composer's surface, issue 33 item 4)
against a stand-in for the library's entry points: which calls each method
makes, in which order, with which name and categories; and no-ops without
the library.  (test/integration/python_marker.sh checks the real library's
trace.)"""

import pytest

import traceprof


class FakeLib(dict):
    """The entry points _lookup() returns, recording each call."""

    def __init__(self, with_cats=True):
        super().__init__()
        self.calls = []
        for k in ("start", "finish", "instant", "counter", "step"):
            self[k] = self._rec(k)
        for k in ("start_cat", "instant_cat"):
            self[k] = self._rec(k) if with_cats else None
        self["active"] = lambda: 1

    def _rec(self, kind):
        def f(*args):
            self.calls.append((kind,) + args)
        return f


@pytest.fixture
def lib(monkeypatch):
    fake = FakeLib()
    monkeypatch.setattr(traceprof._Lazy, "fns", fake)
    monkeypatch.setattr(traceprof._Lazy, "looked", True)
    return fake


def test_start_finish_with_categories(lib):
    m = traceprof.marker("fwd", categories=["train", "fwd"])
    m.start()
    m.finish()
    assert lib.calls == [("start_cat", b"fwd", b"train,fwd"), ("finish", b"fwd")]


def test_record_instants(lib):
    m = traceprof.marker("x", categories=("a",), record_instant_on_start=True,
                         record_instant_on_finish=True)
    with m:
        lib.calls.append("body")
    assert lib.calls == [("start_cat", b"x", b"a"), ("instant_cat", b"x", b"a"), "body",
                         ("finish", b"x"), ("instant_cat", b"x", b"a")]


def test_only_on_start(lib):
    m = traceprof.marker("x", record_instant_on_start=True)
    m.start()
    m.finish()
    assert lib.calls == [("start", b"x"), ("instant", b"x"), ("finish", b"x")]


def test_decorator_and_instant_and_counter(lib):
    m = traceprof.marker("eval", categories="eval")    # one string: one category

    @m
    def f(a, b=2):
        """doc"""
        return a + b
    assert f(1, b=3) == 4
    assert f.__name__ == "f" and f.__doc__ == "doc"
    m.instant()
    m.counter({"loss": 0.5, "lr": 1})
    assert lib.calls == [("start_cat", b"eval", b"eval"), ("finish", b"eval"),
                         ("instant_cat", b"eval", b"eval"),
                         ("counter", b"eval", b"loss", 0.5), ("counter", b"eval", b"lr", 1.0)]


def test_exception_in_body_still_finishes(lib):
    m = traceprof.marker("x")
    with pytest.raises(KeyError):
        with m:
            raise KeyError("k")
    assert lib.calls == [("start", b"x"), ("finish", b"x")]


def test_no_categories(lib):
    for cats in (None, [], ()):
        lib.calls.clear()
        traceprof.marker("p", categories=cats).start()
        assert lib.calls == [("start", b"p")]


def test_older_library_without_categories(monkeypatch):
    fake = FakeLib(with_cats=False)
    monkeypatch.setattr(traceprof._Lazy, "fns", fake)
    monkeypatch.setattr(traceprof._Lazy, "looked", True)
    m = traceprof.marker("x", categories=["a"], record_instant_on_start=True)
    m.start()
    assert fake.calls == [("start", b"x"), ("instant", b"x")]


def test_no_library_is_a_noop(monkeypatch, capsys):
    monkeypatch.setattr(traceprof._Lazy, "fns", None)
    monkeypatch.setattr(traceprof._Lazy, "looked", True)
    m = traceprof.marker("x", categories=["a"], record_instant_on_start=True,
                         record_instant_on_finish=True)
    with m:
        pass
    m.instant()
    m.counter({"a": "not a number"})
    m.counter(None)
    assert m(lambda: 5)() == 5
    assert not traceprof.enabled()
    assert capsys.readouterr() == ("", "")


def test_bad_name_never_raises(lib, capsys):
    m = traceprof.marker("a\0b", categories=["c"])
    lib["start_cat"] = lambda *a: (_ for _ in ()).throw(ValueError("embedded null byte"))
    m.start()
    m.start()
    err = capsys.readouterr().err
    assert err.count("traceprof: marker 'a\\x00b': cannot be recorded") == 1
