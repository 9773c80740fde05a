// pi 1.6.0's SessionManager for the reliability tests (tests/stress/).
// Run with the Node.js 22 that tests/setup-pi.sh installs:
//
//   node pi_tool.mjs SM load TMPDIR FILE...
//       Opens a private COPY of every FILE with SessionManager.open() and
//       prints one JSON line per file: {file, ok, lines, entries, leafId,
//       name, error}.  `lines` counts the file's non-blank lines, so
//       entries == lines - 1 when pi read every line.
//
//   node pi_tool.mjs SM expect STORE OUT TMPDIR FILE...
//       Writes what pi reads from every FILE (a session file under STORE) in
//       the format of tests/diff/gen.mjs's expectations, for
//       tests/diff/check.py --expect OUT (the same function as gen.mjs's
//       expectationsFor, reading a copy; contexts recorded for tips and the
//       leaf only, as gen.mjs does for big sessions).
//
//   node pi_tool.mjs SM writer FILE SECONDS LOG TAG [SLEEP_MS [TEXT_KB]]
//       The writer outside the mount: SessionManager.open(FILE) on the store
//       file itself, then appendMessage() in a loop (user messages, every
//       third an assistant message) for SECONDS; every appended entry is
//       logged to LOG ({"ev":"try"|"ack","kind":"pi","n","ids":[id],
//       "text"}) once appendMessage() has returned (pi writes synchronously).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [smPath, cmd, ...rest] = process.argv.slice(2);
if (!smPath || !cmd) {
	console.error("usage: node pi_tool.mjs SESSION_MANAGER_JS load|expect|writer ...");
	process.exit(2);
}
const { SessionManager, buildSessionContext } = await import(pathToFileURL(smPath).href);

function copyOf(file, tmp) {
	const copy = path.join(tmp, `copy-${crypto.randomUUID()}-${path.basename(file)}`);
	fs.copyFileSync(file, copy);
	return copy;
}

function countLines(file) {
	const text = fs.readFileSync(file, "utf8");
	return text.split("\n").filter((l) => l.trim() !== "").length;
}

if (cmd === "load") {
	const [tmp, ...files] = rest;
	for (const file of files) {
		const out = { file, ok: false };
		try {
			out.lines = countLines(file);
			const copy = copyOf(file, tmp);
			const sm = SessionManager.open(copy, tmp);
			const entries = sm.getEntries();
			out.entries = entries.length;
			out.leafId = sm.getLeafId();
			out.name = sm.getSessionName() ?? null;
			out.contextMessages = sm.buildSessionContext().messages.length;
			out.ok = true;
			fs.unlinkSync(copy);
		} catch (err) {
			out.error = String(err && err.stack ? err.stack : err);
		}
		process.stdout.write(JSON.stringify(out) + "\n");
	}
} else if (cmd === "expect") {
	const [storeRoot, outFile, tmp, ...files] = rest;
	// Contexts only for entries without children (every tree directory's
	// tip is one) and for the leaf: all that check.py compares, and it keeps
	// the expectations small for long sessions.
	const BIG = 0;
	const kindOf = (e) => {
		if (e.type === "message" && e.message && typeof e.message.role === "string") {
			return e.message.role === "toolResult" ? `toolResult-${e.message.toolName}` : e.message.role;
		}
		return e.type;
	};
	const sessions = [];
	for (const file of files) {
		const raw = fs.readFileSync(file);
		// Blank lines are skipped by pi (and by the mount): leave them out.
		const lines = raw.toString("utf8").split("\n").filter((l) => l.trim() !== "");
		const copy = copyOf(file, tmp);
		const sm = SessionManager.open(copy, tmp);
		const entries = sm.getEntries();
		if (entries.length !== lines.length - 1) throw new Error(`${file}: ${lines.length - 1} lines but pi read ${entries.length} entries`);
		const byId = new Map(entries.map((x) => [x.id, x]));
		const children = new Map();
		for (const x of entries) children.set(x.parentId, (children.get(x.parentId) ?? 0) + 1);
		const leaf = sm.getLeafId();
		const big = entries.length > BIG;
		const messages = [];
		const msgIndex = new Map();
		const msgKey = new Map();
		const intern = (m) => {
			let i = msgIndex.get(m);
			if (i !== undefined) return i;
			const k = JSON.stringify(m);
			i = msgKey.get(k);
			if (i === undefined) {
				i = messages.length;
				messages.push(JSON.parse(k));
				msgKey.set(k, i);
			}
			if (m && typeof m === "object") msgIndex.set(m, i);
			return i;
		};
		const contexts = [];
		const out = [];
		const depths = new Map();
		for (const x of entries) {
			const p = x.parentId != null ? depths.get(x.parentId) : undefined;
			const depth = p === undefined ? 1 : p + 1;
			depths.set(x.id, depth);
			let ctx = -1;
			if (!big || !children.get(x.id) || x.id === leaf) {
				const c = buildSessionContext(entries, x.id, byId);
				ctx = contexts.length;
				contexts.push({ m: c.messages.map(intern), thinkingLevel: c.thinkingLevel, model: c.model });
			}
			out.push({ id: x.id, parentId: x.parentId ?? null, kind: kindOf(x), depth, ctx });
		}
		const labels = {};
		for (const x of entries) {
			const l = sm.getLabel(x.id);
			if (l !== undefined) labels[x.id] = l;
		}
		const rel = path.relative(storeRoot, file).split(path.sep);
		sessions.push({
			project: rel[0],
			session: rel[1].replace(/\.jsonl$/, ""),
			file: rel.join("/"),
			idsFromMount: false,
			handWritten: false,
			changed: true,
			header: JSON.parse(lines[0]),
			leaf,
			name: sm.getSessionName() ?? null,
			labels,
			roots: sm.getTree().map((n) => n.entry.id),
			entries: out,
			contexts,
			messages,
			allContexts: !big,
		});
		fs.unlinkSync(copy);
	}
	fs.writeFileSync(outFile, JSON.stringify({ sessions }));
} else if (cmd === "writer") {
	const [file, seconds, logFile, tag, sleepMs, textKb] = rest;
	// TEXT_KB > 0: every message carries that much text, as a big tool
	// output would (a line that spans pages of the file).
	const pad = Number(textKb ?? 0) > 0 ? " " + "x".repeat(Number(textKb) * 1024) : "";
	const log = fs.openSync(logFile, "a");
	const rec = (o) => fs.writeSync(log, JSON.stringify(o) + "\n");
	const sm = SessionManager.open(file);
	const end = Date.now() + Number(seconds) * 1000;
	const pause = Number(sleepMs ?? 0);
	const sab = new Int32Array(new SharedArrayBuffer(4));
	let n = 0;
	let errors = 0;
	while (Date.now() < end) {
		n++;
		const text = `${tag} ${n}${pad}`;
		try {
			let id;
			if (n % 3 === 0) {
				id = sm.appendMessage({
					role: "assistant",
					content: [{ type: "text", text }],
					api: "openai-completions",
					provider: "fake",
					model: "fake-1",
					usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
					stopReason: "stop",
					timestamp: Date.now(),
				});
			} else {
				id = sm.appendMessage({ role: "user", content: text, timestamp: Date.now() });
			}
			rec({ ev: "try", kind: "pi", n, ids: [id], text });
			rec({ ev: "ack", kind: "pi", n, ids: [id], text });
		} catch (err) {
			errors++;
			rec({ ev: "err", kind: "pi", n, error: String(err) });
		}
		if (pause > 0) Atomics.wait(sab, 0, 0, pause);
	}
	rec({ ev: "end", tries: n, errors });
	fs.closeSync(log);
} else {
	console.error(`unknown subcommand ${cmd}`);
	process.exit(2);
}
