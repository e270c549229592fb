"""TensorBoard's PyTorch profiler plugin (torch-tb-profiler), queried over
HTTP as its web page queries it (test/integration/torch_tensorboard.sh).

    tb_http.py LOGDIR OURS THEIRS STEPS

LOGDIR holds two runs (folders of *.pt.trace.json): OURS, traceprof's trace
of a script, and THEIRS, torch.profiler's trace of the same script.  The
plugin's app (TorchProfilerPlugin, with its own routes and loader threads,
as `tensorboard --logdir LOGDIR` builds it) is served on a free local port by
werkzeug; every request below is a real HTTP GET to it.  For each run:
/runs, /views, /workers, /spans, then the Overview (/overview: the times of
the steps numbered STEPS, comma-separated), Operator (/operation/table:
aten::linear and aten::addmm called), Module (/module: the model's modules
as a tree, each once a step with host time, the Linear layers with their
ops) and Trace (/trace: the file itself, gzipped) data.  Every answer must
be 200 with plausible content, and the two runs must list the same views
and the same module tree shape.
Prints what it saw, one line per run."""
import gzip
import json
import logging
import sys
import threading
import time
import urllib.error
import urllib.request

from tensorboard.plugins import base_plugin
from torch_tb_profiler.plugin import TorchProfilerPlugin
from werkzeug.serving import make_server
from werkzeug.wrappers import Response

PREFIX = "/data/plugin/pytorch_profiler"


def serve(logdir):
    plugin = TorchProfilerPlugin(base_plugin.TBContext(logdir=logdir))
    routes = plugin.get_plugin_apps()

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        route = routes.get(path[len(PREFIX):]) if path.startswith(PREFIX) else None
        if route is None:
            return Response("no route %s" % path, status=404)(environ, start_response)
        return route(environ, start_response)

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def get(port, route, **q):
    url = "http://127.0.0.1:%d%s%s?%s" % (port, PREFIX, route, urllib.parse.urlencode(q))
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            body = r.read()
            if r.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            return r.status, body
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def get_json(port, route, **q):
    status, body = get(port, route, **q)
    assert status == 200, "%s %s: HTTP %d: %s" % (route, q, status, body[:300])
    return json.loads(body)


def modules(rows, depth=0):
    """The module tree as (depth, name) in the plugin's order."""
    out = []
    for r in rows:
        out.append((depth, r["name"], r["occurences"]))
        out += modules(r["children"], depth + 1)
    return out


def check_run(port, run, steps):
    views = get_json(port, "/views", run=run)
    workers = get_json(port, "/workers", run=run, view="Overview")
    assert len(workers) == 1, (run, workers)
    w = workers[0]
    spans = get_json(port, "/spans", run=run, worker=w)
    assert spans, (run, "no spans")
    q = {"run": run, "worker": w, "span": spans[0]}
    status, body = get(port, "/module", **q)
    assert status == 200, "%s: the Module view's data: HTTP %d: %s" % (run, status, body[:200])
    want = {"Overview", "Operator", "Trace", "Module"}
    assert want <= set(views), "%s: views %s, want %s" % (run, views, sorted(want))
    ov = get_json(port, "/overview", **q)
    # Overview: one row of the steps' time table per step recorded, named by
    # its number, with a time (the numbers in the row, split by kind).
    rows = ov["steps"]["rows"]
    names = [r[0] for r in rows]
    times = [sum(v for v in r[1:] if isinstance(v, (int, float))) for r in rows]
    assert names == steps and all(t > 0 for t in times), (run, "step rows", rows, "want", steps)
    ops = get_json(port, "/operation/table", group_by="Operation", **q)
    calls = {r["name"]: r["calls"] for r in ops["data"]}
    for name in ("aten::linear", "aten::addmm"):
        assert calls.get(name, 0) > 0, (run, "operator table lacks", name, sorted(calls)[:20])
    mods = get_json(port, "/module", **q)
    tree = modules(mods["data"])
    assert tree, (run, "empty module view")
    # Each module once a step, with time, and the Linear layers' ops
    # (aten::linear) counted as theirs.
    def rows(rs):
        for r in rs:
            yield r
            yield from rows(r["children"])
    for r in rows(mods["data"]):
        assert r["occurences"] == len(steps) and r["host_duration"] > 0, (run, "module row", r)
        if r["name"].startswith("Linear"):
            assert r["operators"] > 0, (run, "a Linear without ops", r)
    status, trace = get(port, "/trace", **q)
    assert status == 200, (run, "/trace", status)
    ev = json.loads(trace)["traceEvents"]
    assert any(e.get("name") == "aten::addmm" for e in ev), (run, "trace without aten::addmm")
    print("%s: views %s; steps %s; addmm x%d, linear x%d; modules %s; trace %d events"
          % (run, views, names, calls["aten::addmm"], calls["aten::linear"],
             [(d, n) for d, n, _ in tree], len(ev)))
    return views, tree


def main():
    logdir, ours, theirs, steps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
    srv = serve(logdir)
    port = srv.server_port
    deadline = time.time() + 300
    while True:
        runs = get_json(port, "/runs")
        if not runs["loading"] and {ours, theirs} <= set(runs["runs"]):
            break
        assert time.time() < deadline, "runs not loaded: %s" % runs
        time.sleep(0.5)
    v_ours, t_ours = check_run(port, ours, steps)
    v_theirs, t_theirs = check_run(port, theirs, steps)
    # The same views (torch.profiler's own run may add none we lack), and
    # the same module tree shape: each module once per step, nested as the
    # model is.  Names differ on purpose: torch.profiler numbers modules
    # per class ("Linear_1"); traceprof names them by their qualified name
    # in the model ("Linear head").
    assert set(v_theirs) <= set(v_ours), ("views", v_ours, v_theirs)

    def shape(tree):
        return sorted((d, n.split("_")[0].split(" ")[0], k) for d, n, k in tree)
    assert shape(t_ours) == shape(t_theirs), ("module trees", t_ours, t_theirs)
    srv.shutdown()
    print("tensorboard over HTTP: the same views and module tree for both runs")


if __name__ == "__main__":  # the plugin's loader starts processes
    main()
