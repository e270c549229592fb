// Reads trace files with two third-party readers from npm and checks that
// neither drops nor mis-nests a complete event:
//   - Chrome DevTools' trace engine (@paulirish/trace_engine): its Renderer
//     handler builds one tree of slices per thread, dropping a slice that
//     partly overlaps the one before it;
//   - speedscope's Trace Event Format importer (speedscope): one profile per
//     thread, where a slice that does not end inside its parent is nested
//     wrongly ("Tried to end ... Doing nothing instead").
//
//   node readers.mjs NODE_MODULES FILE...
//
// The expected tree comes from the times the file means, in whole ns (see
// endOf()): per thread, by start and then longest first, each slice is a
// child of the innermost open slice that contains it.  Both
// readers must give every slice the depth the exact tree gives it, with the
// same multiset of (depth, name) per thread.  Prints one line per file and
// reader; exits 1 when one differs, 2 on a usage or setup error.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import zlib from 'node:zlib';

const [modules, ...files] = process.argv.slice(2);
if (!modules || files.length === 0) {
	console.error('usage: readers.mjs NODE_MODULES FILE...');
	process.exit(2);
}

// ---- The slices the file means -------------------------------------------
//
// Starts are exact: ts has 3 places, whole ns.  traceprof writes dur so
// that double(ts) + double(dur) is exactly double(end) for the end's whole
// ns (format/trace.c), so the end it means is the ns E whose 3-place decimal
// has that double (unique: an ulp is below a ns up to 2^43 us).  For files
// with no such E (other writers, or a writer without that rule) the end is
// the exact decimal sum, which is what such a file says.

function nsOf(dec) {
	const neg = dec.startsWith('-');
	const [i, f = ''] = (neg ? dec.slice(1) : dec).split('.');
	if (f.length > 3 || /[eE]/.test(dec))
		throw new Error(`ts ${dec}: more than 3 decimals or an exponent`);
	const v = BigInt(i + f.padEnd(3, '0'));
	return neg ? -v : v;
}

function usText(ns) {
	const neg = ns < 0n;
	const a = neg ? -ns : ns;
	return `${neg ? '-' : ''}${a / 1000n}.${String(a % 1000n).padStart(3, '0')}`;
}

// The end, in ns, that ts and dur (decimal strings) mean.
function endOf(tsText, durText) {
	const s = nsOf(tsText);
	const sum = Number(tsText) + Number(durText);
	const guess = s + BigInt(Math.round(Number(durText) * 1000));
	for (const d of [0n, -1n, 1n, -2n, 2n]) {
		if (Number(usText(guess + d)) === sum)
			return { s, e: guess + d, exact: true };
	}
	// The decimal sum, rounded down to whole ns (as such a file means it).
	const [i, f = ''] = durText.split('.');
	const dur = BigInt(i + f.padEnd(3, '0').slice(0, 3));
	return { s, e: s + dur, exact: false };
}

function load(file) {
	let buf = fs.readFileSync(file);
	if (buf[0] === 0x1f && buf[1] === 0x8b)
		buf = zlib.gunzipSync(buf);
	const text = buf.toString('utf8');
	const data = JSON.parse(text);
	const events = Array.isArray(data) ? data : data.traceEvents;
	// traceprof (format/trace.c, and traceprof merge, which keeps its lines)
	// writes "ts" then "dur" in every complete event and nowhere else, so
	// the n-th match is the n-th complete event of the array.
	const times = [...text.matchAll(/"ts":(-?[0-9.]+),"dur":([0-9.]+)/g)];
	const slices = [];
	for (const e of events)
		if (e && e.ph === 'X')
			slices.push(e);
	if (times.length !== slices.length)
		throw new Error(`${slices.length} complete events but ${times.length} "ts":..,"dur":.. pairs`);
	let inexact = 0;
	slices.forEach((e, k) => {
		const r = endOf(times[k][1], times[k][2]);
		e.__s = r.s;
		e.__e = r.e;
		inexact += r.exact ? 0 : 1;
	});
	return { events, slices, inexact };
}

function threadKey(pid, tid) {
	return `${pid}/${tid}`;
}

// Per thread: "depth:name" -> count, from the exact times.  Slices that
// partly overlap in the file itself are traceprof's defect, reported too.
// name(e): how the reader names a slice (speedscope appends its args).
// joinTouching: a slice that starts where a slice of the same name ends, on
// the same level, continues it (speedscope opens the second before closing
// the first when their keys are equal, then closes them in the wrong order:
// one slice spanning both).
function expected(slices, keepEmpty, name = e => e.name, joinTouching = false) {
	const by = new Map();
	for (const e of slices) {
		if (!keepEmpty && e.__e === e.__s)
			continue;
		const k = threadKey(e.pid, e.tid);
		if (!by.has(k))
			by.set(k, []);
		by.get(k).push(e);
	}
	const out = new Map();
	const overlaps = [];
	for (const [k, list] of by) {
		list.sort((a, b) => (a.__s < b.__s ? -1 : a.__s > b.__s ? 1 :
			a.__e > b.__e ? -1 : a.__e < b.__e ? 1 : 0));
		const stack = [];
		const m = new Map();
		for (const e of list) {
			while (stack.length && stack[stack.length - 1].__e <= e.__s) {
				const top = stack[stack.length - 1];
				if (joinTouching && top.__e === e.__s && name(top) === name(e) &&
				    e.__e >= top.__e)
					break;
				stack.pop();
			}
			const top0 = stack[stack.length - 1];
			if (joinTouching && top0 && top0.__e === e.__s && name(top0) === name(e)) {
				top0.__e = e.__e; // continued: not a slice of its own
				continue;
			}
			const top = stack[stack.length - 1];
			if (top && e.__e > top.__e)
				overlaps.push(`${k}: "${e.name}" overlaps "${top.name}"`);
			const key = `${stack.length}:${name(e)}`;
			m.set(key, (m.get(key) || 0) + 1);
			stack.push(e);
		}
		out.set(k, m);
	}
	return { out, overlaps };
}

function diff(want, got) {
	const lines = [];
	for (const [k, wm] of want) {
		const gm = got.get(k) || new Map();
		const keys = new Set([...wm.keys(), ...gm.keys()]);
		for (const key of keys) {
			const w = wm.get(key) || 0, g = gm.get(key) || 0;
			if (w !== g)
				lines.push(`thread ${k}: depth:name ${key}: ${w} expected, ${g} read`);
		}
	}
	for (const k of got.keys())
		if (!want.has(k))
			lines.push(`thread ${k}: read but not in the file`);
	return lines;
}

// ---- DevTools' trace engine ----------------------------------------------

const Trace = await import(path.join(modules, '@paulirish/trace_engine/models/trace/trace.js'));

async function devtools(events) {
	const model = Trace.TraceModel.Model.createWithAllHandlers();
	// The engine may mutate events; give it copies without our fields.
	await model.parse(events.map(e => {
		if (!e || typeof e !== 'object')
			return e;
		const { __s, __e, ...rest } = e;
		return rest;
	}));
	const got = new Map();
	const r = model.parsedTrace().data.Renderer;
	for (const [pid, p] of r.processes) {
		for (const [tid, t] of p.threads) {
			const m = new Map();
			const walk = (node, depth) => {
				const key = `${depth}:${node.entry.name}`;
				m.set(key, (m.get(key) || 0) + 1);
				for (const c of node.children)
					walk(c, depth + 1);
			};
			for (const root of t.tree ? t.tree.roots : [])
				walk(root, 0);
			if (m.size)
				got.set(threadKey(pid, tid), m);
		}
	}
	return got;
}

// ---- speedscope ----------------------------------------------------------

// speedscope ships as one browser bundle: its importer is found by the log
// line it prints before calling it, exported from the bundle's scope, and
// the bundle is run with enough of a window to define its functions (the
// app's start at its end fails without a DOM, after that).
function speedscopeImporter() {
	const dir = path.join(modules, 'speedscope/dist/release');
	const f = fs.readdirSync(dir).find(n => /^speedscope-.*\.js$/.test(n));
	if (!f)
		throw new Error(`no speedscope bundle in ${dir}`);
	let src = fs.readFileSync(path.join(dir, f), 'utf8');
	const m = /Importing as Trace Event Format profile"\),([\w$]+)\(/.exec(src);
	const head = '"use strict";(()=>{';
	if (!m || !src.startsWith(head))
		throw new Error(`speedscope ${f}: the Trace Event Format importer was not found`);
	src = head + `globalThis.__tpSpeedscopeImport=(...a)=>${m[1]}(...a);` + src.slice(head.length);
	const stub = new Proxy(function () {}, {
		get: (t, k) => (k === Symbol.toPrimitive ? () => '' : stub),
		apply: () => stub,
		construct: () => stub,
	});
	globalThis.window = globalThis;
	for (const k of ['document', 'navigator', 'location', 'localStorage', 'addEventListener',
			 'requestAnimationFrame', 'matchMedia'])
		if (!(k in globalThis))
			globalThis[k] = stub;
	const log = console.log;
	console.log = () => {};
	try {
		vm.runInThisContext(src);
	} catch (e) {
		// Expected: the app's start needs a real DOM.
	}
	console.log = log;
	if (typeof globalThis.__tpSpeedscopeImport !== 'function')
		throw new Error('speedscope: the importer could not be exported');
	return globalThis.__tpSpeedscopeImport;
}

const ssImport = speedscopeImporter();

function speedscope(events) {
	const warnings = [];
	const warn = console.warn, log = console.log;
	console.warn = (...a) => warnings.push(a.join(' '));
	console.log = () => {};
	let group;
	try {
		group = ssImport({ traceEvents: events.map(e => {
			if (!e || typeof e !== 'object')
				return e;
			const { __s, __e, ...rest } = e;
			return rest;
		}) });
	} finally {
		console.warn = warn;
		console.log = log;
	}
	const got = new Map();
	for (const p of group.profiles) {
		// Profiles are named "<process> (pid P), <thread> (tid T)", or
		// "<name> (pid P, tid T)", or "pid P, tid T"; names may contain the
		// same words, so the last ones count.
		const mm = /^.*\(pid ([^ ,)]+)\), .*\(tid ([^ )]+)\)$/.exec(p.getName()) ||
			   /(?:^|\()pid ([^ ,]+), tid ([^ )]+)\)?$/.exec(p.getName());
		const k = mm ? threadKey(mm[1], mm[2]) : p.getName();
		const m = got.get(k) || new Map();
		let depth = 0;
		p.forEachCall(node => {
			const key = `${depth}:${node.frame.name}`;
			m.set(key, (m.get(key) || 0) + 1);
			depth++;
		}, () => {
			depth--;
		});
		got.set(k, m);
	}
	return { got, warnings };
}

// ---- Main ----------------------------------------------------------------

let failed = 0;
for (const file of files) {
	const name = path.basename(file);
	let t;
	try {
		t = load(file);
	} catch (e) {
		console.log(`FAIL ${name}: ${e.message}`);
		failed++;
		continue;
	}
	const { out: want, overlaps } = expected(t.slices, true);
	if (t.inexact)
		console.log(`note ${name}: ${t.inexact} of ${t.slices.length} slices do not end at a whole ns in doubles`);
	if (overlaps.length) {
		console.log(`FAIL ${name}: the file itself has partly overlapping slices: ${overlaps.slice(0, 3).join('; ')}`);
		failed++;
	}
	const dt = diff(want, await devtools(t.events));
	if (dt.length) {
		console.log(`FAIL ${name}: DevTools' trace engine: ${dt.length} differences:\n  ${dt.slice(0, 8).join('\n  ')}`);
		failed++;
	} else {
		console.log(`ok   ${name}: DevTools' trace engine read all ${t.slices.length} slices, nested as in the file`);
	}
	// speedscope leaves out slices of zero length (they have no width in
	// its flame chart): by design, not a misreading.
	const ss = speedscope(t.events);
	// Copies: joining touching slices moves ends.
	const copies = t.slices.map(e => ({ ...e }));
	const sd = diff(expected(copies, false, e => (e.name || '(unnamed)') +
				    (e.args ? ` ${JSON.stringify(e.args)}` : ''), true).out, ss.got);
	const bad = ss.warnings.filter(w => /Tried to end|stack was empty/.test(w));
	if (sd.length || bad.length) {
		console.log(`FAIL ${name}: speedscope: ${sd.length} differences, ${bad.length} warnings:\n  ` +
			    `${[...bad.slice(0, 3), ...sd.slice(0, 8)].join('\n  ')}`);
		failed++;
	} else {
		console.log(`ok   ${name}: speedscope read all ${t.slices.filter(e => e.__e !== e.__s).length} slices of non-zero length, nested as in the file`);
	}
}
process.exit(failed ? 1 : 0);
