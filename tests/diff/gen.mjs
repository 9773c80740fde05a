// Differential test, part 1: build a randomized session store with pi's own
// SessionManager and record what pi makes of every session.
//
// Run with the Node.js 22 that tests/setup-pi.sh installs:
//   node gen.mjs --sm .../dist/core/session-manager.js --store DIR --out FILE
//                [--seed S] [--sessions N] [--quick] [--fixtures DIR]
//   node gen.mjs --sm ... --store DIR --out FILE2 --seed S --append FILE
// The second form is the append phase, run while the store is mounted: pi
// reopens about a third of the sessions and appends to them, migrates (and so
// rewrites in place) a version-1 fixture, writes new sessions and a new
// project, and a session file and a project directory are removed. Its
// expectations cover every session still in the store; the ones that changed
// or are new carry changed: true.
//
// Sessions are written by SessionManager.create()/append*()/branch()/
// branchWithSummary()/resetLeaf(), exactly as pi writes them. A few "edge"
// sessions are written line by line (ids and labels that need escaping,
// names with untrimmed whitespace, an orphan, odd timestamps) because pi's
// API cannot produce them; pi still reads them back. Fixtures (--fixtures)
// are copied into the store byte for byte.
//
// Expectations are always computed by reading the written file back with
// pi (SessionManager.open() on a private copy, which also migrates version 1
// files), never from the generator's own bookkeeping:
//   header      the first line, as stored (parsed)
//   entries     in file order (entry i is line i+2 of the file, which the
//               checker reads from the store): id, parentId, kind (file-name
//               kind), depth in pi's tree (getBranch(id).length), and
//               ctx: index of pi's buildSessionContext(entries, id)
//   contexts    {m: [indexes into messages], thinkingLevel, model}
//   messages    the distinct context messages of the session
//   leaf, labels (getLabel() of every id), name (getSessionName()), roots
//               (getTree())
// For sessions above BIG entries, contexts are recorded only for entries
// without children (every tree directory's tip is one) and for the leaf, to
// keep the file small; every other entry has ctx = -1.
//
// --without lone-surrogates,nul leaves out strings that hold lone UTF-16
// surrogates (JSON.stringify writes "\ud83d" for a string cut in the middle
// of an emoji) or NUL characters, to tell failures apart.
//
// Entry ids come from crypto.randomUUID(), which is replaced by a generator
// seeded with --seed, so a seed reproduces ids and tree shape (timestamps
// and session file names still come from the clock).

import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { makeRng } from "./seeded.mjs";

// ---------------------------------------------------------------- arguments
const args = { seed: "20261129", sessions: null, quick: false, sm: process.env.PI_SESSION_MANAGER, store: null, out: null, fixtures: null, append: null, without: new Set() };
{
	const a = process.argv.slice(2);
	for (let i = 0; i < a.length; i++) {
		const k = a[i];
		const v = () => {
			if (i + 1 >= a.length) throw new Error(`missing value for ${k}`);
			return a[++i];
		};
		if (k === "--seed") args.seed = v();
		else if (k === "--sessions") args.sessions = Number.parseInt(v(), 10);
		else if (k === "--quick") args.quick = true;
		else if (k === "--sm") args.sm = v();
		else if (k === "--store") args.store = v();
		else if (k === "--out") args.out = v();
		else if (k === "--fixtures") args.fixtures = v();
		else if (k === "--append") args.append = v();
		else if (k === "--without") for (const f of v().split(",")) args.without.add(f);
		else throw new Error(`unknown argument ${k}`);
	}
	if (!args.sm || !args.store || !args.out) {
		console.error("usage: gen.mjs --sm SESSION_MANAGER_JS --store DIR --out FILE [--seed S] [--sessions N] [--quick] [--fixtures DIR] [--append PREVIOUS_EXPECTATIONS] [--without lone-surrogates,nul]");
		process.exit(2);
	}
	if (args.sessions === null) args.sessions = args.quick ? 12 : 40;
}

// ---------------------------------------------------------------- seeded randomness
const phase = args.append ? "/append" : "";
const rng = makeRng(args.seed + phase);
const idRng = makeRng(`${args.seed}${phase}/ids`);
const rand = () => rng();
const randInt = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1)); // inclusive
const chance = (p) => rand() < p;
const pick = (arr) => arr[Math.floor(rand() * arr.length)];
function weighted(table) {
	let total = 0;
	for (const [w] of table) total += w;
	let x = rand() * total;
	for (const [w, v] of table) {
		x -= w;
		if (x < 0) return v;
	}
	return table[table.length - 1][1];
}

// pi's generateId() takes randomUUID().slice(0, 8): make it reproducible.
crypto.randomUUID = () => {
	const hex = () => Math.floor(idRng() * 16).toString(16);
	let s = "";
	for (let i = 0; i < 32; i++) s += hex();
	return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-a${s.slice(17, 20)}-${s.slice(20, 32)}`;
};
syncBuiltinESMExports();

const pi = await import(pathToFileURL(path.resolve(args.sm)).href);
const { SessionManager, buildSessionContext } = pi;

// ---------------------------------------------------------------- content
const WORDS = [
	"the", "function", "returns", "a", "value", "file", "test", "build", "error", "fix", "branch", "tree",
	"über", "naïve", "café", "日本語", "テスト", "中文", "한국어", "Ελληνικά", "кириллица", "עברית", "العربية",
	"🙂", "🚀", "👩‍💻", "e\u0301", "`code`", "**bold**", "_it_", "<tag>", "&amp;", "\"quoted\"", "'single'",
	"back\\slash", "tab\there", "50%", "a/b/c", "C:\\path", "${x}", "{json: 1}", "[1, 2]", "--flag", "..", ".",
];
function words(n) {
	const out = [];
	for (let i = 0; i < n; i++) out.push(pick(WORDS));
	return out.join(" ");
}
function text(min = 1, max = 30) {
	let s = words(randInt(min, max));
	if (chance(0.3)) s += "\n\n" + words(randInt(1, 20));
	if (chance(0.1)) s = "```sh\n" + s + "\n```\n";
	if (chance(0.05)) s += "\r\nwindows line";
	return s;
}
function bigText(kb) {
	const lines = [];
	let size = 0;
	let i = 0;
	while (size < kb * 1024) {
		const l = `${String(i++).padStart(6, "0")}: ${words(12)}`;
		lines.push(l);
		size += Buffer.byteLength(l) + 1;
	}
	return lines.join("\n");
}
function commandOutput() {
	if (chance(0.03)) return bigText(randInt(40, 160));
	let s = text(0, 40);
	if (chance(0.15)) s += "\u001b[31mred\u001b[0m \u0007bell \u0008bs";
	if (chance(0.04) && !args.without.has("nul")) s += "binary\u0000nul\u0000bytes";
	if (chance(0.02) && !args.without.has("lone-surrogates")) s += "truncated in the middle of an emoji \ud83d"; // JSON.stringify writes \ud83d
	if (chance(0.1)) s += "\n";
	return s;
}
const TOOLS = ["bash", "read", "edit", "write", "grep", "mcp__github__search", "weird tool/name", "ünïcode-tool", "t%25", "a.b"];
const PROVIDERS = [["anthropic", "claude-sonnet-4-5"], ["openai", "gpt-4o"], ["fake", "fake-1"], ["google", "gemini-2.5-pro"], ["local", "qwen/qwen3:8b"]];
const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];
const LABELS = ["checkpoint-1", "checkpoint-2", "good", "todo", "v2 attempt", "wip/feature", "ümlaut", "50%", "fix: crash", "a.b", "UPPER_lower", "🚀 launch", "with\ttab", "%41"];
const NAMES = ["Refactor auth module", "  padded name  ", "multi\nline\nname", "日本語のセッション", "emoji 🚀 name", "tabs\tinside", "x", "name with / slash", "50% done", "a\r\nb"];

let clock = 1795979491000;
const ts = () => (clock += randInt(1, 5000));

function usage() {
	const input = randInt(0, 200000);
	const output = randInt(0, 8000);
	const cacheRead = chance(0.5) ? randInt(0, 100000) : 0;
	const u = { input, output, cacheRead, cacheWrite: 0, totalTokens: input + output + cacheRead };
	if (chance(0.5)) u.reasoning = randInt(0, 2000);
	u.cost = { input: input * 3e-6, output: output * 1.5e-5, cacheRead: cacheRead * 3e-7, cacheWrite: 0, total: input * 3e-6 + output * 1.5e-5 + cacheRead * 3e-7 };
	return u;
}
function jsonValue(depth = 0) {
	const kind = depth > 3 ? randInt(0, 4) : randInt(0, 7);
	switch (kind) {
		case 0: return null;
		case 1: return chance(0.5);
		case 2: return pick([0, -1, 42, 3.5, 1e21, 1e20, 2 ** 64, -(2 ** 63) * 4, 1e-7, 2 ** 53, -(2 ** 31), 0.1 + 0.2, 123456789012, 5e-324, 1.7976931348623157e308]);
		case 3: return text(0, 5);
		case 4: return pick(["", "\u2028\u2029", "\ud83d\ude00", "\\u0041", args.without.has("nul") ? "" : "\u0000"]);
		case 5: { const a = []; for (let i = randInt(0, 4); i > 0; i--) a.push(jsonValue(depth + 1)); return a; }
		default: {
			const o = {};
			for (let i = randInt(0, 4); i > 0; i--) o[pick(["a", "b", "key with space", "ключ", "", "nested", "__proto_", "0", "1"]) + (chance(0.3) ? i : "")] = jsonValue(depth + 1);
			return o;
		}
	}
}
function userContent() {
	if (chance(0.4)) return text();
	const blocks = [{ type: "text", text: text() }];
	if (chance(0.15)) blocks.push({ type: "image", data: Buffer.from(words(5)).toString("base64"), mimeType: pick(["image/png", "image/jpeg"]) });
	if (chance(0.2)) blocks.push({ type: "text", text: text() });
	return blocks;
}
let callCounter = 0;
function assistantMessage(withTools, model) {
	const content = [];
	if (chance(0.4)) {
		const b = { type: "thinking", thinking: text(3, 40) };
		if (chance(0.5)) b.thinkingSignature = Buffer.from(words(3)).toString("base64");
		content.push(b);
	}
	if (!withTools || chance(0.6)) content.push({ type: "text", text: text() });
	const calls = [];
	if (withTools) {
		for (let i = randInt(1, 3); i > 0; i--) {
			const name = pick(TOOLS);
			const call = { type: "toolCall", id: pick(["call_", "toolu_", "fc_"]) + ++callCounter, name, arguments: name === "bash" ? { command: text(1, 5) } : { path: `/tmp/${randInt(1, 99)}.txt`, extra: jsonValue(2) } };
			content.push(call);
			calls.push(call);
		}
	}
	const stopReason = withTools ? "toolUse" : weighted([[10, "stop"], [1, "length"], [1, "error"], [1, "aborted"]]);
	const m = { role: "assistant", content, api: pick(["openai-completions", "anthropic-messages", "google-generative-ai"]), provider: model[0], model: model[1], usage: usage(), stopReason, timestamp: ts() };
	if (stopReason === "error") m.errorMessage = text(1, 8);
	if (chance(0.1)) m.responseId = `resp_${randInt(1, 1e6)}`;
	return { m, calls };
}
function toolResult(call) {
	const m = { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text: commandOutput() }], isError: chance(0.15), timestamp: ts() };
	if (chance(0.3)) m.details = jsonValue(1);
	if (chance(0.2)) m.durationMs = randInt(1, 9000);
	if (chance(0.05)) m.content.push({ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" });
	return m;
}
function bashExecution() {
	const m = { role: "bashExecution", command: text(1, 6), output: commandOutput(), exitCode: chance(0.1) ? undefined : randInt(0, 2), cancelled: chance(0.1), truncated: chance(0.1), timestamp: ts() };
	if (chance(0.2)) m.fullOutputPath = `/tmp/pi-bash-${randInt(1, 9999)}.log`;
	if (chance(0.3)) m.excludeFromContext = chance(0.5);
	return m;
}
const TOOL_DECLS = TOOLS.slice(0, 5).map((name) => ({ name, description: `The ${name} tool. ${text(2, 10)}`, parameters: { type: "object", required: ["path"], properties: { path: { type: "string", description: "Path" } } } }));
function systemMessage(first, cwd) {
	const m = { role: "system", content: first ? "" : chance(0.5) ? text(2, 10) : "", timestamp: ts() };
	if (first || chance(0.7)) {
		m.sections = first
			? { preamble: "You are a coding assistant running inside pi.", tools: `<tools>\n${TOOL_DECLS.map((t) => `- ${t.name}`).join("\n")}\n</tools>`, rules: text(5, 30), cwd: `<cwd>\n${cwd}\n</cwd>` }
			: chance(0.3) ? { rules: null } : { [pick(["rules", "extra", "docs"])]: text(2, 20) };
	}
	if (first) m.toolsAdded = TOOL_DECLS;
	else if (chance(0.3)) m.toolsAdded = [pick(TOOL_DECLS)];
	else if (chance(0.3)) m.toolsRemoved = [{ name: pick(TOOLS) }];
	return m;
}

// ---------------------------------------------------------------- one generated session
function isEditable(e) {
	return e.type === "custom_message" || (e.type === "message" && ["user", "assistant", "toolResult"].includes(e.message.role));
}

function generateSession(sessionDir, cwd, plan) {
	const sm = SessionManager.create(cwd, sessionDir);
	growSession(sm, plan, cwd);
	return sm.getSessionFile();
}

// Appends plan.entries entries to sm (a new session, or one pi reopened).
function growSession(sm, plan, cwd) {
	let model = pick(PROVIDERS);
	const order = []; // ids in file order
	const starts = []; // first entries of branches (labels go there often)
	let pendingStart = false;
	const tips = new Set(); // entries without children
	const firstChild = new Set();
	for (const e of sm.getEntries()) {
		order.push(e.id);
		tips.delete(e.parentId);
		tips.add(e.id);
		if (firstChild.has(e.parentId ?? "\u0000")) starts.push(e.id);
		firstChild.add(e.parentId ?? "\u0000");
	}
	const target = order.length + plan.entries;
	const note = (id) => {
		order.push(id);
		tips.delete(sm.getEntry(id).parentId);
		tips.add(id);
		if (pendingStart) {
			starts.push(id);
			pendingStart = false;
		}
		return id;
	};

	if (order.length === 0) {
		// How pi 1.6.0 starts a session (see the v3 fixture): model, thinking level, system prompt.
		if (chance(0.8)) note(sm.appendModelChange(model[0], model[1]));
		if (chance(0.7)) note(sm.appendThinkingLevelChange(pick(LEVELS)));
		if (chance(0.75)) note(sm.appendMessage(systemMessage(true, cwd)));
		note(sm.appendMessage({ role: "user", content: userContent(), timestamp: ts() }));
	}

	const branchP = plan.branchP;
	while (order.length < target) {
		// Where to append next.
		const r = rand();
		if (r < branchP && order.length > 2) {
			// Fork from an earlier entry, biased toward recent ones.
			const idx = chance(plan.deep ? 0 : 0.5) ? randInt(0, order.length - 1) : Math.max(0, order.length - 1 - randInt(1, 15));
			sm.branch(order[idx]);
			pendingStart = true;
		} else if (r < branchP + plan.jumpP && order.length > 2) {
			// Continue some existing branch tip (extends branches, deepens them).
			sm.branch(pick([...tips]));
		} else if (r < branchP + plan.jumpP + (plan.deep ? 0 : 0.004)) {
			sm.resetLeaf(); // a new root (pi: re-edit the first message)
			pendingStart = true;
		}

		const action = weighted([
			[30, "turn"],
			[10, "user"],
			[4, "bash"],
			[3, "thinking"],
			[3, "model"],
			[3, "compaction"],
			[3, "custom"],
			[4, "custom_message"],
			[3, "session_info"],
			[6, "label"],
			[4, "context_edit"],
			[2, "usage"],
			[2, "system"],
			[3, "branch_summary"],
		]);
		switch (action) {
			case "turn": {
				note(sm.appendMessage({ role: "user", content: userContent(), timestamp: ts() }));
				for (let round = randInt(0, 3); round >= 0 && order.length < target + 10; round--) {
					const withTools = round > 0;
					const { m, calls } = assistantMessage(withTools, model);
					note(sm.appendMessage(m));
					for (const c of calls) note(sm.appendMessage(toolResult(c)));
				}
				break;
			}
			case "user":
				note(sm.appendMessage({ role: "user", content: userContent(), timestamp: ts() }));
				if (chance(0.7)) note(sm.appendMessage(assistantMessage(false, model).m));
				break;
			case "bash":
				note(sm.appendMessage(bashExecution()));
				break;
			case "thinking":
				note(sm.appendThinkingLevelChange(pick(LEVELS)));
				break;
			case "model":
				model = pick(PROVIDERS);
				note(sm.appendModelChange(model[0], model[1]));
				break;
			case "compaction": {
				const branch = sm.getBranch();
				let first;
				const k = rand();
				if (k < 0.65 && branch.length) first = branch[randInt(0, branch.length - 1)].id; // on the branch
				else if (k < 0.8) first = undefined; // pi: defaults to the compaction's own id
				else if (k < 0.9) first = pick(order); // maybe off the branch
				else first = "00000000"; // not in the file
				const details = chance(0.5) ? { readFiles: ["/a", "/b"], modifiedFiles: [] } : undefined;
				note(sm.appendCompaction(text(3, 40), first, randInt(1000, 200000), details, chance(0.2) ? true : undefined, chance(0.3) ? usage() : undefined));
				break;
			}
			case "custom":
				note(sm.appendCustomEntry(pick(["my-extension", "pi.loadout", "ext/with slash", "état"]), chance(0.8) ? jsonValue() : undefined));
				break;
			case "custom_message": {
				const content = chance(0.5) ? text() : [{ type: "text", text: text() }, ...(chance(0.2) ? [{ type: "image", data: "R0lGODlh", mimeType: "image/gif" }] : [])];
				note(sm.appendCustomMessageEntry(pick(["my-extension", "reminder", "hook/x"]), content, chance(0.5), chance(0.5) ? jsonValue(1) : undefined));
				break;
			}
			case "session_info":
				note(sm.appendSessionInfo(chance(0.2) ? "" : chance(0.1) ? "   " : pick(NAMES) + (chance(0.3) ? ` ${randInt(1, 99)}` : "")));
				break;
			case "label": {
				// Labels on branch starts are the interesting ones (named branch dirs).
				const labelTarget = starts.length && chance(0.6) ? pick(starts) : pick(order);
				const cur = sm.getLabel(labelTarget);
				let label;
				if (cur && chance(0.35)) label = chance(0.5) ? "" : undefined; // clear
				else label = pick(LABELS) + (chance(0.4) ? `-${randInt(1, 5)}` : "");
				note(sm.appendLabelChange(labelTarget, label));
				break;
			}
			case "context_edit": {
				const targets = sm.getBranch().filter(isEditable);
				if (!targets.length) break;
				const t = pick(targets);
				const k = rand();
				const replacement = k < 0.25 ? null : k < 0.6 ? { content: text() } : { content: [{ type: "text", text: text() }] };
				note(sm.appendContextEdit(t.id, replacement));
				break;
			}
			case "usage":
				note(sm.appendUsage(pick(["compaction", "branch_summary", "title", "tool"]), model[0], model[1], usage(), chance(0.5) ? text(1, 5) : undefined).id);
				break;
			case "system":
				note(sm.appendMessage(systemMessage(false, cwd)));
				break;
			case "branch_summary": {
				const from = plan.deep ? sm.getLeafId() : chance(0.1) ? null : pick(order);
				const summary = chance(0.1) ? "" : text(3, 30);
				pendingStart = false;
				starts.push(note(sm.branchWithSummary(from, summary, chance(0.4) ? { readFiles: [], modifiedFiles: ["/x"] } : undefined, chance(0.2) ? true : undefined, chance(0.2) ? usage() : undefined)));
				break;
			}
		}
	}
	// Sometimes end with a label: labels are entries, the last one is the leaf.
	if (chance(0.3) && starts.length) note(sm.appendLabelChange(pick(starts), pick(LABELS)));
}

// ---------------------------------------------------------------- hand-written edge sessions
// pi reads these back exactly like its own files; they only need lines pi's
// API refuses or never writes.
function edgeSessions(dir) {
	const files = [];
	const write = (name, objs) => {
		const f = path.join(dir, name);
		fs.writeFileSync(f, objs.map((o) => (typeof o === "string" ? o : JSON.stringify(o))).join("\n") + "\n");
		files.push(f);
	};
	const hdr = (id) => ({ type: "session", version: 3, id, timestamp: "2026-11-29T10:00:00.000Z", cwd: "/home/u/edge-cases" });
	const t = (s) => `2026-11-29T10:00:${String(s).padStart(2, "0")}.000Z`;
	const msg = (id, parentId, s, message) => ({ type: "message", id, parentId, timestamp: t(s), message: { timestamp: 1795979491000 + s, ...message } });

	// Ids and labels that must be escaped, a second root, an orphan, labels that collide.
	const ids = ["a/b", "%2F", "..", "é", "sp ace", ".", "a.b", "x:y", "+=@,", "tab\there", "new\nline", "-lead", "UPPER"];
	const e = [hdr("0196e000-0000-7000-8000-000000000001")];
	e.push(msg(ids[0], null, 1, { role: "user", content: "root" }));
	e.push(msg(ids[1], ids[0], 2, { role: "assistant", content: [{ type: "text", text: "one" }], provider: "p", model: "m", usage: usage(), stopReason: "stop" }));
	e.push(msg(ids[2], ids[1], 3, { role: "user", content: "main line" }));
	e.push(msg(ids[3], ids[1], 4, { role: "user", content: "branch 1" }));
	e.push(msg(ids[4], ids[1], 5, { role: "user", content: "branch 2" }));
	e.push(msg(ids[5], ids[1], 6, { role: "user", content: "branch 3" }));
	e.push(msg(ids[6], ids[5], 7, { role: "toolResult", toolCallId: "c/1", toolName: "../etc", content: [{ type: "text", text: "r" }], isError: false }));
	e.push({ type: "label", id: ids[7], parentId: ids[6], timestamp: t(8), targetId: ids[3], label: "same" });
	e.push({ type: "label", id: ids[8], parentId: ids[7], timestamp: t(9), targetId: ids[4], label: "same" });
	e.push({ type: "label", id: ids[9], parentId: ids[8], timestamp: t(10), targetId: ids[5], label: ".." });
	e.push({ type: "label", id: ids[10], parentId: ids[9], timestamp: t(11), targetId: ids[0], label: "a/b c%d é" });
	e.push(msg(ids[11], null, 12, { role: "user", content: "second root" }));
	e.push(msg(ids[12], "no-such-parent", 13, { role: "user", content: "orphan" }));
	e.push({ type: "session_info", id: "name-1", parentId: ids[12], timestamp: t(14), name: "\u00a0\u3000 untrimmed\tname \u2003" });
	write("2026-11-29T10-00-00-000Z_0196e000-0000-7000-8000-000000000001.jsonl", e);

	// Entries pi builds context messages from, with fields missing or unusual.
	const f = [hdr("0196e000-0000-7000-8000-000000000002")];
	f.push({ type: "thinking_level_change", id: "t1", parentId: null, timestamp: t(1), thinkingLevel: "high" });
	f.push(msg("u1", "t1", 2, { role: "user", content: "hi" }));
	f.push({ type: "custom_message", id: "cm1", parentId: "u1", timestamp: "2026-11-29T10:00:03Z", customType: "x", content: "no ms in timestamp", display: true });
	f.push({ type: "custom_message", id: "cm2", parentId: "cm1", timestamp: "2026-11-29T12:00:04.5+02:00", customType: "x", content: [{ type: "text", text: "offset timestamp" }] });
	f.push({ type: "custom_message", id: "cm3", parentId: "cm2", timestamp: t(5), content: "no customType, no display" });
	f.push({ type: "branch_summary", id: "bs1", parentId: "cm3", timestamp: t(6), summary: "no fromId" });
	f.push({ type: "branch_summary", id: "bs2", parentId: "bs1", timestamp: t(7), fromId: "u1", summary: "" });
	f.push({ type: "model_change", id: "mc1", parentId: "bs2", timestamp: t(8), provider: "p2", modelId: "m2" });
	f.push(msg("u2", "mc1", 9, { role: "user", content: null }));
	f.push(msg("a2", "u2", 10, { role: "assistant", provider: "p3", model: "m3", usage: usage(), stopReason: "stop" }));
	f.push({ type: "compaction", id: "c1", parentId: "a2", timestamp: t(11), summary: "compacted", firstKeptEntryId: "u2" });
	f.push(msg("s1", "c1", 12, { role: "system", sections: { a: "b" } }));
	f.push({ type: "context_edit", id: "ce1", parentId: "s1", timestamp: t(13), targetId: "u2", replacement: { content: "edited" } });
	f.push({ type: "context_edit", id: "ce2", parentId: "ce1", timestamp: t(14), targetId: "a2", replacement: null });
	f.push({ type: "context_edit", id: "ce3", parentId: "ce2", timestamp: t(15), targetId: "u2", replacement: { content: [{ type: "text", text: "edited twice" }] } });
	f.push({ type: "custom", id: "cu1", parentId: "ce3", timestamp: t(16), customType: "state", data: { n: 1 } });
	f.push({ type: "usage", id: "us1", parentId: "cu1", timestamp: t(17), kind: "tool", provider: "p", model: "m", usage: usage() });
	f.push({ type: "session_info", id: "si1", parentId: "us1", timestamp: t(18), name: "first name" });
	f.push({ type: "session_info", id: "si2", parentId: "si1", timestamp: t(19) });
	// Branches off u1, one theme each (every tip's context is compared).
	// A: context edits pi's API refuses: null on a bashExecution, a replacement
	// without content, a raw string on an assistant; an assistant without
	// provider/model (pi's model becomes {}).
	f.push(msg("bx1", "u1", 20, { role: "bashExecution", command: "ls", output: "a\nb", exitCode: 0, cancelled: false, truncated: false }));
	f.push({ type: "context_edit", id: "ea1", parentId: "bx1", timestamp: t(21), targetId: "bx1", replacement: null });
	f.push({ type: "context_edit", id: "ea2", parentId: "ea1", timestamp: t(22), targetId: "u1", replacement: {} });
	f.push(msg("a3", "ea2", 23, { role: "assistant", content: [{ type: "text", text: "no model" }], usage: usage(), stopReason: "stop" }));
	f.push({ type: "context_edit", id: "ea4", parentId: "a3", timestamp: t(24), targetId: "a3", replacement: { content: "raw string" } });
	// B: a compaction (no tokensBefore) whose summary a null edit removes.
	f.push({ type: "compaction", id: "cb1", parentId: "u1", timestamp: t(25), summary: "s", firstKeptEntryId: "u1" });
	f.push({ type: "context_edit", id: "cb2", parentId: "cb1", timestamp: t(26), targetId: "cb1", replacement: null });
	// C: entry timestamps that pi turns into message timestamps with new Date().getTime().
	f.push({ type: "custom_message", id: "tc1", parentId: "u1", customType: "x", content: "no timestamp", display: false });
	f.push({ type: "custom_message", id: "tc2", parentId: "tc1", timestamp: 1795979491234, customType: "x", content: "numeric timestamp", display: false });
	f.push({ type: "custom_message", id: "tc3", parentId: "tc2", timestamp: "2026-11-29T10:00:05.123456Z", customType: "x", content: "microseconds", display: false });
	f.push({ type: "custom_message", id: "tc4", parentId: "tc3", timestamp: "2026-11-29", customType: "x", content: "date only", display: false });
	f.push({ type: "custom_message", id: "tc5", parentId: "tc4", timestamp: "garbage", customType: "x", content: "invalid", display: false });
	f.push({ type: "custom_message", id: "tc6", parentId: "tc5", timestamp: "2026-11-29 10:00:03Z", customType: "x", content: "space separator", display: false });
	f.push({ type: "branch_summary", id: "tc7", parentId: "tc6", timestamp: "2026-11-29T10:00:06.1Z", fromId: "tc1", summary: "one fraction digit" });
	// D: settings and contents with fields missing; numbers and strings a C
	// JSON parser may refuse (pi's JSON.stringify writes 2**64 as 18446744073709552000,
	// and a lone surrogate as \ud83d).
	f.push({ type: "thinking_level_change", id: "td1", parentId: "u1", timestamp: t(30) });
	f.push({ type: "model_change", id: "td2", parentId: "td1", timestamp: t(31), provider: "only-provider" });
	f.push({ type: "custom_message", id: "td3", parentId: "td2", timestamp: t(32), customType: "x", display: true });
	f.push(`{"type":"custom_message","id":"td4","parentId":"td3","timestamp":"${t(33)}","customType":"x","content":"big numbers","display":true,"details":{"u64":18446744073709552000,"big":123456789012345678901234567890,"neg":-9223372036854775809,"frac":0.30000000000000004,"e":1E+21}}`);
	f.push(msg("td5", "td4", 34, { role: "user", content: [{ type: "text", text: args.without.has("lone-surrogates") ? "no surrogate" : "truncated emoji \ud83d" }] }));
	write("2026-11-29T10-00-01-000Z_0196e000-0000-7000-8000-000000000002.jsonl", f);

	// A version-2 file (ids, but the hookMessage role of before version 3).
	const g = [{ type: "session", version: 2, id: "0196e000-0000-7000-8000-000000000003", timestamp: t(0), cwd: "/home/u/edge-cases" }];
	g.push(msg("v2u", null, 1, { role: "user", content: "v2" }));
	g.push(msg("v2h", "v2u", 2, { role: "hookMessage", customType: "hook", content: "from a hook", display: true }));
	g.push(msg("v2a", "v2h", 3, { role: "assistant", content: [{ type: "text", text: "ok" }], provider: "p", model: "m", usage: usage(), stopReason: "stop" }));
	g.push(msg("v2b", "v2u", 4, { role: "hookMessage", customType: "hook", content: [{ type: "text", text: "branch" }], display: false }));
	write("2026-11-29T10-00-02-000Z_0196e000-0000-7000-8000-000000000003.jsonl", g);

	// Invalid UTF-8 (another writer, a cut file): pi's reader decodes with
	// StringDecoder, which puts U+FFFD for each maximal invalid subpart.
	const bad = (hex) => Buffer.from(hex.replace(/ /g, ""), "hex");
	const parts = [
		Buffer.from(JSON.stringify({ type: "session", version: 3, id: "0196e000-0000-7000-8000-000000000004", timestamp: t(0), cwd: "/home/u/edge-cases" }) + "\n"),
		Buffer.from(`{"type":"message","id":"bu1","parentId":null,"timestamp":"${t(1)}","message":{"role":"user","timestamp":1,"content":"lone ff `), bad("ff"),
		Buffer.from(" cut 3-byte "), bad("e2 82"), Buffer.from(" overlong "), bad("c0 af"), Buffer.from(" cesu "), bad("ed a0 bd ed b8 80"),
		Buffer.from(" past U+10FFFF "), bad("f4 90 80 80"), Buffer.from(" cut 4-byte "), bad("f0 9f 98"), Buffer.from(' end"}}\n'),
		Buffer.from(`{"type":"label","id":"bl1","parentId":"bu1","timestamp":"${t(2)}","targetId":"bu1","label":"bad `), bad("fe"), Buffer.from(' label"}\n'),
		// A branch whose first entry's id holds a bad byte; its child names it with U+FFFD.
		Buffer.from(`{"type":"message","id":"bi`), bad("ff"), Buffer.from(`d","parentId":"bu1","timestamp":"${t(3)}","message":{"role":"assistant","content":[{"type":"text","text":"id with a bad byte"}],"provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}\n`),
		Buffer.from(`{"type":"message","id":"bc1","parentId":"bi\ufffdd","timestamp":"${t(4)}","message":{"role":"user","content":"child of the bad id","timestamp":3}}\n`),
		Buffer.from(`{"type":"session_info","id":"bn1","parentId":"bl1","timestamp":"${t(5)}","name":"name `), bad("c3"), Buffer.from(' cut"}\n'),
	];
	const f4 = path.join(dir, "2026-11-29T10-00-03-000Z_0196e000-0000-7000-8000-000000000004.jsonl");
	fs.writeFileSync(f4, Buffer.concat(parts));
	files.push(f4);
	return files;
}

// ---------------------------------------------------------------- expectations (pi reads the file back)
const BIG = 3000;

function kindOf(e) {
	if (e.type === "message" && e.message && typeof e.message.role === "string") {
		return e.message.role === "toolResult" ? `toolResult-${e.message.toolName}` : e.message.role;
	}
	return e.type;
}

function expectationsFor(file, storeRoot, tmp, opts = {}) {
	const raw = fs.readFileSync(file);
	const text = raw.toString("utf8");
	const lines = text.split("\n");
	if (lines[lines.length - 1] === "") lines.pop();
	// pi may rewrite (migrate) a file it opens: give it a copy.
	const copy = path.join(tmp, `copy-${path.basename(file)}`);
	fs.writeFileSync(copy, raw);
	const sm = SessionManager.open(copy, tmp);
	const entries = sm.getEntries();
	if (entries.length !== lines.length - 1) throw new Error(`${file}: ${lines.length - 1} lines but pi read ${entries.length} entries`);
	const byId = new Map(entries.map((x) => [x.id, x]));
	const children = new Map();
	for (const x of entries) children.set(x.parentId, (children.get(x.parentId) ?? 0) + 1);
	const leaf = sm.getLeafId();
	const big = entries.length > BIG;

	const messages = [];
	const msgIndex = new Map(); // by object identity
	const msgKey = new Map(); // by serialization
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
	let depthCheck = 0;
	const depths = new Map();
	for (let i = 0; i < entries.length; i++) {
		const x = entries[i];
		let depth;
		if (!big || i % 97 === 0) {
			depth = sm.getBranch(x.id).length;
			depthCheck++;
		}
		const p = x.parentId != null ? depths.get(x.parentId) : undefined;
		const inc = p === undefined ? 1 : p + 1;
		if (depth !== undefined && depth !== inc) throw new Error(`${file}: depth of ${x.id}: pi ${depth}, incremental ${inc}`);
		depths.set(x.id, inc);
		let ctx = -1;
		if (!big || !children.get(x.id) || x.id === leaf) {
			const c = buildSessionContext(entries, x.id, byId);
			ctx = contexts.length;
			contexts.push({ m: c.messages.map(intern), thinkingLevel: c.thinkingLevel, model: c.model });
		}
		out.push({ id: x.id, parentId: x.parentId ?? null, kind: kindOf(x), depth: inc, ctx });
	}
	const labels = {};
	for (const x of entries) {
		const l = sm.getLabel(x.id);
		if (l !== undefined) labels[x.id] = l;
	}
	const rel = path.relative(storeRoot, file).split(path.sep);
	return {
		project: rel[0],
		session: rel[1].replace(/\.jsonl$/, ""),
		file: rel.join("/"),
		idsFromMount: !!opts.idsFromMount,
		handWritten: !!opts.handWritten,
		changed: !!opts.changed,
		header: JSON.parse(lines[0]),
		leaf,
		name: sm.getSessionName() ?? null,
		labels,
		roots: sm.getTree().map((n) => n.entry.id),
		entries: out,
		contexts,
		messages,
		allContexts: !big,
	};
}

// ---------------------------------------------------------------- main
const store = path.resolve(args.store);
fs.mkdirSync(store, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pisessionfs-gen-"));
const CWDS = ["/home/u/alpha-project", "/home/u/my-app-2", "/srv/work/multi-dash-name-x", "/home/u/ünï-cöde", "/home/u/with space", "/home/u/-lead-dash"];
const DOOMED = "/home/u/doomed-project"; // removed by the append phase
const projectDir = (cwd) => path.join(store, `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
const versionOf = (file) => JSON.parse(fs.readFileSync(file, "utf8").split("\n", 1)[0]).version ?? 1;

const t0 = Date.now();
let files = [];
let what;
if (!args.append) {
	for (let i = 0; i < args.sessions; i++) {
		const cwd = CWDS[i % CWDS.length];
		let plan;
		if (i === 3 && !args.quick) plan = { entries: 10100, branchP: 0.0003, jumpP: 0, deep: true }; // depth past 9999
		else if (i % 13 === 5) plan = { entries: randInt(args.quick ? 200 : 400, args.quick ? 300 : 900), branchP: 0.08, jumpP: 0.04 };
		else if (i % 11 === 7) plan = { entries: randInt(300, 600), branchP: 0.01, jumpP: 0.002 }; // deep chains
		else plan = { entries: randInt(8, args.quick ? 60 : 120), branchP: randInt(4, 20) / 100, jumpP: 0.04 };
		files.push({ file: generateSession(projectDir(cwd), cwd, plan) });
	}
	for (let i = 0; i < 2; i++) files.push({ file: generateSession(projectDir(DOOMED), DOOMED, { entries: 10, branchP: 0.1, jumpP: 0 }) });
	const edgeDir = projectDir("/home/u/edge-cases");
	fs.mkdirSync(edgeDir, { recursive: true });
	for (const f of edgeSessions(edgeDir)) files.push({ file: f, handWritten: true });
	if (args.fixtures) {
		const fx = path.join(store, "--fixtures--");
		fs.mkdirSync(fx, { recursive: true });
		for (const name of fs.readdirSync(args.fixtures).sort()) {
			if (!name.endsWith(".jsonl")) continue;
			const dst = path.join(fx, name);
			fs.copyFileSync(path.join(args.fixtures, name), dst);
			files.push({ file: dst });
		}
	}
	what = "store";
} else {
	// Append phase, while the store is mounted: pi reopens sessions and appends
	// to them (SessionManager.open() + append*: appendFileSync), rewrites a
	// version-1 file in place (open() migrates it: same inode, truncated and
	// rewritten longer, so not an append), new sessions and a new project
	// appear, a session file and a project directory disappear.
	const prev = JSON.parse(fs.readFileSync(args.append, "utf8"));
	const handWritten = new Set(prev.sessions.filter((s) => s.handWritten).map((s) => s.file));
	const changed = new Set();
	const generated = prev.sessions.filter((s) => !s.handWritten && !s.file.startsWith("--fixtures--/") && !s.file.startsWith(path.basename(projectDir(DOOMED)) + "/"));
	fs.rmSync(projectDir(DOOMED), { recursive: true, force: true });
	const victim = pick(generated.filter((s) => s.entries.length < 200));
	fs.unlinkSync(path.join(store, victim.file));
	const biggest = generated.reduce((a, b) => (b.entries.length > a.entries.length ? b : a));
	for (const s of generated) {
		if (s === victim || (s !== biggest && !chance(0.35))) continue;
		const file = path.join(store, s.file);
		const sm = SessionManager.open(file);
		growSession(sm, { entries: randInt(3, 40), branchP: 0.15, jumpP: 0.1 }, sm.getCwd());
		changed.add(s.file);
	}
	for (const s of prev.sessions) {
		if (!s.file.startsWith("--fixtures--/")) continue;
		const file = path.join(store, s.file);
		if (s.file.endsWith("v3-branched.jsonl") || s.file.endsWith("v1-large-session.jsonl")) {
			const sm = SessionManager.open(file); // migrates (rewrites) the version-1 one
			growSession(sm, { entries: randInt(5, 15), branchP: 0.2, jumpP: 0.1 }, sm.getCwd());
			changed.add(s.file);
		}
	}
	for (let i = 0; i < 3; i++) {
		const cwd = pick(CWDS);
		changed.add(path.relative(store, generateSession(projectDir(cwd), cwd, { entries: randInt(5, 50), branchP: 0.1, jumpP: 0.05 })));
	}
	for (let i = 0; i < 2; i++) {
		const cwd = "/home/u/new-project";
		changed.add(path.relative(store, generateSession(projectDir(cwd), cwd, { entries: randInt(5, 50), branchP: 0.1, jumpP: 0.05 })));
	}
	for (const p of fs.readdirSync(store).sort()) {
		for (const f of fs.readdirSync(path.join(store, p)).sort()) {
			if (!f.endsWith(".jsonl")) continue;
			const rel = `${p}/${f}`;
			files.push({ file: path.join(store, rel), handWritten: handWritten.has(rel), changed: changed.has(rel) });
		}
	}
	what = `append phase: ${changed.size} sessions changed or new, removed ${victim.file} and ${path.basename(projectDir(DOOMED))}/`;
}
// Version 1 files have no ids; pi's migration invents random ones and the
// mount derives its own, so the checker maps ids by stored line.
for (const f of files) f.idsFromMount = versionOf(f.file) < 2;
const sessions = files.map(({ file, ...opts }) => expectationsFor(file, store, tmp, opts));
fs.rmSync(tmp, { recursive: true, force: true });
fs.writeFileSync(args.out, JSON.stringify({ seed: args.seed, generator: "tests/diff/gen.mjs", pi: "1.6.0", sessions }));

let entries = 0, branches = 0, roots = 0, maxDepth = 0, contexts = 0;
for (const s of sessions) {
	entries += s.entries.length;
	contexts += s.contexts.length;
	roots += s.roots.length;
	const first = new Set();
	for (const e of s.entries) {
		maxDepth = Math.max(maxDepth, e.depth);
		const k = e.parentId ?? "\u0000root";
		if (first.has(k)) branches++;
		else first.add(k);
	}
}
console.log(`gen: seed ${args.seed}: ${what}: ${sessions.length} sessions, ${entries} entries, ${branches} forks, ${roots} roots, max depth ${maxDepth}, ${contexts} pi contexts, ${Date.now() - t0} ms`);
