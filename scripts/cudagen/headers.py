"""What the toolkit declares and exports: the headers run through the C
preprocessor in both modes (see scripts/gen-cuda-wrappers' doc), the
nvcc-internal entry points read from the header text, the profiler headers
written where NVIDIA's wheels lack them, all intersected with `nm -D` of the
libraries (collect()).  Part of scripts/gen-cuda-wrappers."""
import os
import re
import subprocess
import sys
import tempfile

from .specs import DRIVER, RUNTIME

C_KEYWORDS = {"const", "volatile", "restrict", "__restrict", "__restrict__", "struct", "union",
              "enum", "unsigned", "signed", "int", "char", "short", "long", "float", "double",
              "void", "_Bool", "size_t", "__extension__", "__inline", "inline", "extern", "static"}


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, universal_newlines=True, **kw).stdout


def exported(lib):
    """Defined function symbols of a shared library, without version suffix."""
    out = run(["nm", "-D", "--defined-only", lib])
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in ("T", "W", "i"):
            names.add(parts[2].split("@")[0])
    return names


def strip_attributes(text):
    """Removes __attribute__((...)) and __declspec(...) with balanced parens."""
    out = []
    i = 0
    pat = re.compile(r"__attribute__\s*\(|__declspec\s*\(|__asm__\s*\(|__asm\s*\(")
    while True:
        m = pat.search(text, i)
        if not m:
            out.append(text[i:])
            break
        out.append(text[i:m.start()])
        depth = 0
        j = m.end() - 1
        while j < len(text):
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        i = j + 1
    return "".join(out)


def statements(text):
    """Top-level declarations ending in ';'; bodies ({...}) are dropped, and a
    function definition is dropped whole (only prototypes are wanted)."""
    cur = []
    depth = 0
    had_body = False
    for ch in text:
        if depth == 0:
            if ch == ";":
                s = "".join(cur).strip()
                if s and not had_body:
                    yield s
                cur = []
                had_body = False
            elif ch == "{":
                depth = 1
                had_body = True
            else:
                cur.append(ch)
        else:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    pre = "".join(cur).strip()
                    # A function definition has no ';' after its body.
                    if pre.endswith(")") and not re.match(r"^(typedef\s+)?(struct|union|enum)\b", pre):
                        cur = []
                        had_body = False


def split_params(s):
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def param_name(p):
    """The declared name of a parameter, or None when it has none."""
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", p)
    if m:
        return m.group(1)
    q = re.sub(r"\[[^\]]*\]\s*$", "", p).strip()
    toks = re.findall(r"\w+|\*", q)
    # `struct X` and `enum X` are one type token.
    merged = []
    k = 0
    while k < len(toks):
        if toks[k] in ("struct", "union", "enum") and k + 1 < len(toks):
            merged.append(toks[k] + " " + toks[k + 1])
            k += 2
        else:
            merged.append(toks[k])
            k += 1
    merged = [t for t in merged if t not in ("const", "volatile", "restrict", "__restrict", "__restrict__")]
    if len(merged) >= 2 and re.match(r"^\w+$", merged[-1]) and merged[-1] not in C_KEYWORDS:
        return merged[-1]
    return None


class Fn:
    def __init__(self, name, ret, params, lib):
        self.name, self.ret, self.params, self.lib = name, ret, params, lib
        self.skip = None


def parse_decl(s, prefix_re):
    s = " ".join(s.split())
    if s.startswith("typedef") or "(" not in s:
        return None
    m = re.match(r"^(?:extern\s+(?:\"C\"\s+)?)?(?P<ret>[\w\s\*]+?)\s*\b(?P<name>%s)\s*\((?P<params>.*)\)$" % prefix_re, s)
    if not m:
        return None
    ret = m.group("ret").strip()
    ret = re.sub(r"\b(extern|__host__|__device__|CUDARTAPI|CUDAAPI|__cudart_builtin__|__CUDA_DEPRECATED)\b", "", ret)
    ret = " ".join(ret.split())
    return m.group("name"), ret, m.group("params").strip()


# The profiler headers the wheels lack, as the toolkit declares them (the
# deprecation attribute left out: the wrappers are built with
# __CUDA_API_VERSION_INTERNAL, which leaves it out too).
PROFILER_HEADERS = {
    "cudaProfiler.h": """/* Generated by scripts/gen-cuda-wrappers: the declarations of the
 * toolkit's cudaProfiler.h, which NVIDIA's wheels do not ship. */
#ifndef cuda_profiler_H
#define cuda_profiler_H
#include <cuda.h>
typedef enum CUoutput_mode_enum { CU_OUT_KEY_VALUE_PAIR = 0x00, CU_OUT_CSV = 0x01 } CUoutput_mode;
CUresult CUDAAPI cuProfilerInitialize(const char *configFile, const char *outputFile, CUoutput_mode outputMode);
CUresult CUDAAPI cuProfilerStart(void);
CUresult CUDAAPI cuProfilerStop(void);
#endif
""",
    "cuda_profiler_api.h": """/* Generated by scripts/gen-cuda-wrappers: the declarations of the
 * toolkit's cuda_profiler_api.h, which NVIDIA's wheels do not ship. */
#if !defined(__CUDA_PROFILER_API_H__)
#define __CUDA_PROFILER_API_H__
#include "driver_types.h"
extern __host__ cudaError_t CUDARTAPI cudaProfilerStart(void);
extern __host__ cudaError_t CUDARTAPI cudaProfilerStop(void);
#endif
""",
}


def profiler_shims(cuda_home, as_wheels):
    """The profiler headers to write into --out: those CUDA_HOME lacks (all
    of them with --as-wheels)."""
    return {h: text for h, text in PROFILER_HEADERS.items()
            if as_wheels or not os.path.exists(os.path.join(cuda_home, "include", h))}


def preprocess(cc, cuda_home, header_lines, defines, shim_dir=None):
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write("".join("#include <%s>\n" % h for h in header_lines))
        path = f.name
    try:
        first = ["-I", shim_dir] if shim_dir else []
        cmd = [cc, "-E", "-P"] + first + ["-I", os.path.join(cuda_home, "include")] + \
            ["-D" + d for d in defines] + [path]
        return run(cmd)
    finally:
        os.unlink(path)


def declared_from_text(text, prefix_re):
    text = strip_attributes(text)
    found = {}
    for st in statements(text):
        d = parse_decl(st, prefix_re)
        if d and d[0] not in found:
            found[d[0]] = d
    return found


def internal_entry_points(cuda_home):
    """nvcc-internal runtime entry points, read from the C++ header text."""
    found = {}
    for h in ("crt/host_runtime.h", "crt/device_functions.h"):
        path = os.path.join(cuda_home, "include", h)
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        text = re.sub(r"^\s*#[^\n]*(\\\n[^\n]*)*", " ", text, flags=re.M)
        text = text.replace('extern "C" {', " ").replace("extern \"C\"", " ")
        for m in re.finditer(r"(?:^|[;}\n])\s*((?:extern\s+)?(?:__host__\s+|__device__\s+)*[\w\s\*]*?\bCUDARTAPI\s+(__cuda\w+)\s*\(([^;{)]*(?:\([^)]*\)[^;{)]*)*)\)\s*;)",
                             text):
            name = m.group(2)
            d = parse_decl(m.group(1).replace("CUDARTAPI", " ").rstrip(";").strip(), r"__cuda\w+")
            if not d:
                continue
            params = re.sub(r"\s*=\s*[^,]+", "", d[2])  # C++ default arguments
            found.setdefault(name, (name, d[1], params))
    return found


def make_fn(decl, lib):
    name, ret, params = decl
    fn = Fn(name, ret, [], lib)
    plist = split_params(params)
    if plist in ([], ["void"]):
        return fn
    for i, p in enumerate(plist):
        if p == "...":
            fn.skip = "variadic: the arguments cannot be forwarded"
            return fn
        n = param_name(p)
        if n is None:
            n = "a%d" % i
            if re.search(r"\(\s*\*\s*\)", p):
                p = re.sub(r"\(\s*\*\s*\)", "(*%s)" % n, p, count=1)
            elif p.rstrip().endswith("]"):
                p = re.sub(r"(\[[^\]]*\])\s*$", " %s\\1" % n, p)
            else:
                p = p + " " + n
        fn.params.append((p, n))
    return fn


def base_name(name):
    b = re.sub(r"_(ptsz|ptds)$", "", name)
    return re.sub(r"_v\d+$", "", b)


def ret_kind(ret):
    if ret == "void":
        return "void"
    if "*" in ret:
        return "ptr"
    if re.match(r"^(const\s+)?(struct|union)\b", ret):
        return "struct"
    return "int"


def first_file(cuda_home, names):
    for name in names:
        path = os.path.join(cuda_home, name)
        if os.path.exists(path):
            return path
    return None


def collect(cuda_home, cc, as_wheels=False, shim_dir=None):
    inc = os.path.join(cuda_home, "include")
    rt_lib = first_file(cuda_home, ["lib64/libcudart.so", "lib/libcudart.so",
                                    "lib64/libcudart.so.13", "lib/libcudart.so.13"])
    if rt_lib is None:
        sys.exit("gen-cuda-wrappers: no libcudart.so under %s/lib64 or lib (the toolkit's, or the "
                 "nvidia-cuda-runtime wheel's libcudart.so.13)" % cuda_home)
    drv_lib = None if as_wheels else first_file(
        cuda_home, ["lib64/stubs/libcuda.so", "lib/stubs/libcuda.so"])
    rt_exp = exported(rt_lib)

    rt_decl, drv_decl = {}, {}
    for defines in ([], ["__CUDA_API_VERSION_INTERNAL"]):
        text = preprocess(cc, cuda_home, ["cuda.h", "cudaProfiler.h"], defines, shim_dir)
        for k, v in declared_from_text(text, r"cu[A-Z]\w*").items():
            drv_decl.setdefault(k, v)
    drv_exp = exported(drv_lib) if drv_lib else set(drv_decl)
    for defines in ([], ["CUDA_API_PER_THREAD_DEFAULT_STREAM"]):
        text = preprocess(cc, cuda_home, ["cuda_runtime_api.h", "cuda_profiler_api.h"], defines, shim_dir)
        for k, v in declared_from_text(text, r"cuda\w+").items():
            rt_decl.setdefault(k, v)
    for k, v in internal_entry_points(cuda_home).items():
        rt_decl.setdefault(k, v)

    fns, skipped = [], []
    for lib, exp, decl in ((RUNTIME, rt_exp, rt_decl), (DRIVER, drv_exp, drv_decl)):
        for name in sorted(exp):
            if not re.match(r"^(cu[A-Z]|cuda|__cuda)", name):
                skipped.append((name, lib, "not a CUDA API name"))
                continue
            if name not in decl:
                if re.search(r"GL|EGL|VDPAU", name):
                    why = "graphics interop: declared in headers that need GL/EGL/VDPAU headers"
                else:
                    why = "undocumented: no prototype in the toolkit headers"
                skipped.append((name, lib, why))
                continue
            fn = make_fn(decl[name], lib)
            if fn.skip:
                skipped.append((name, lib, fn.skip))
                continue
            fns.append(fn)
    fns.sort(key=lambda f: f.name)
    return fns, skipped, len(rt_exp), len(drv_exp), (inc, rt_lib, drv_lib or "cuda.h (no driver stub)")
