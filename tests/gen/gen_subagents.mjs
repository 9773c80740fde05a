// Build a pi session store shaped the way the pi-subagents extension
// (npm pi-subagents 0.67.0) lays out subagent runs, writing every session
// file with pi's own SessionManager.
//
// Run with the Node.js 22 that tests/setup-pi.sh installs:
//   eval "$(tests/setup-pi.sh)"
//   $PI_NODE tests/gen/gen_subagents.mjs --sm "$PI_SESSION_MANAGER" --store DIR
//            [--seed S] [--parents N] [--runs-per-parent K | --runs R]
//            [--forks F] [--preset small|bench] [--empty-run-dirs]
//
// DIR is a pi session store root (the `sessions/` folder). Default: 3
// parents, 4 subagent runs in all (one of them with two children), 1 fork,
// 1 async run (artifacts, no session file) and one outputs/<runId>/notes.md.
// --runs-per-parent K gives every parent K runs and (unless --forks says
// otherwise) one fork each; --preset bench is 1000 parents x 5 runs.
//
// Layout, as pi-subagents 0.67.0 makes it (PROJECT = DIR/--<cwd>--):
//   PROJECT/<ts>_<id>.jsonl                     parent, SessionManager.create(cwd, PROJECT)
//   PROJECT/<stem>/<runId>/run-<N>/session.jsonl child of a fresh run: the
//       executor's sessionFileForTask(agent, N) = join(sessionRoot, `run-${N}`,
//       "session.jsonl"), opened by child-session.ts as
//       SessionManager.open(sessionFile, undefined, cwd); sessionRoot =
//       join(getSubagentSessionRoot(parentFile), runId), getSubagentSessionRoot
//       = join(dirname(parentFile), basename(parentFile, ".jsonl")).
//   PROJECT/<stem>/forks/<ts>_<id>.jsonl        child of a context:"fork" run:
//       fork-context.ts SessionManager.open(parentFile, <stem>/forks)
//       .createBranchedSession(leafId); the child then appends to that file.
//   PROJECT/subagent-artifacts/                 getArtifactsDir(parentFile) with
//       artifactDir "session": join(dirname(parentFile), "subagent-artifacts");
//       files named by getArtifactPaths(dir, runId, agent, index):
//       `${runId}_${agent}${index !== undefined ? `_${index}` : ""}` +
//       `_input.md` `_output.md` `.jsonl` `_transcript.jsonl` `_meta.json`.
//       Foreground runs pass index 0 (runSinglePath), so they always carry
//       `_0`; the background runner passes flatStepCount > 1 ? flatIndex :
//       undefined, so a one-step async run has no index and writes no `.jsonl`.
//   PROJECT/subagent-artifacts/outputs/<runId>/notes.md
//       resolveSingleRunOutputBaseDir: join(artifactsDir, "outputs", runId).
// Two-child runs (run-0 and run-1, artifacts `_0` and `_1`) follow the same
// helpers with index 1; pi-subagents 0.67.0 itself removed top-level
// tasks[]/chain[] and only launches index 0 from the foreground executor.
//
// Everything drawn comes from --seed; pi's entry ids too (crypto.randomUUID
// is replaced by a seeded generator, as tests/diff/gen.mjs does). Only what
// pi takes from the clock changes between runs: session ids (uuidv7), file
// names, header and entry timestamps.
//
// stdout: JSON {store, seed, sessions: [{path, kind, parentStem, runId,
// index, agent, cost}], artifacts: [...], total}. cost is the sum of
// usage.cost.total over the assistant messages pi reads back from the file
// (SessionManager.open); for a fork that includes the messages copied from
// the parent (inheritedCost says how much of it).

import crypto from "node:crypto";
import { syncBuiltinESMExports } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { makeRng } from "../diff/seeded.mjs";

// ---------------------------------------------------------------- arguments
const args = { sm: process.env.PI_SESSION_MANAGER, store: null, seed: "20260910", parents: null, runsPerParent: null, runs: null, forks: null, preset: "small", emptyRunDirs: false };
{
	const a = process.argv.slice(2);
	for (let i = 0; i < a.length; i++) {
		const k = a[i];
		const v = () => {
			if (i + 1 >= a.length) throw new Error(`missing value for ${k}`);
			return a[++i];
		};
		const int = () => {
			const s = v();
			if (!/^\d+$/.test(s)) throw new Error(`${k} wants a non-negative integer, got ${s}`);
			return Number.parseInt(s, 10);
		};
		if (k === "--sm") args.sm = v();
		else if (k === "--store") args.store = v();
		else if (k === "--seed") args.seed = v();
		else if (k === "--parents") args.parents = int();
		else if (k === "--runs-per-parent") args.runsPerParent = int();
		else if (k === "--runs") args.runs = int();
		else if (k === "--forks") args.forks = int();
		else if (k === "--preset") args.preset = v();
		else if (k === "--empty-run-dirs") args.emptyRunDirs = true;
		else if (k === "-h" || k === "--help") { usage(0); }
		else throw new Error(`unknown argument ${k}`);
	}
	if (!args.sm || !args.store) usage(2);
	if (args.preset === "bench") {
		args.parents ??= 1000;
		if (args.runs === null) args.runsPerParent ??= 5;
	} else if (args.preset !== "small") throw new Error(`unknown preset ${args.preset}`);
	args.parents ??= 3;
	if (args.runsPerParent !== null && args.runs !== null) throw new Error("give --runs-per-parent or --runs, not both");
	if (args.runsPerParent === null && args.runs === null) args.runs = args.parents === 3 ? 4 : args.parents;
	args.forks ??= args.runsPerParent !== null ? args.parents : 1;
	if (args.forks > args.parents) throw new Error("--forks is at most one per parent");
}
function usage(code) {
	(code ? console.error : console.log)("usage: gen_subagents.mjs --sm SESSION_MANAGER_JS --store DIR [--seed S] [--parents N] [--runs-per-parent K | --runs R] [--forks F] [--preset small|bench] [--empty-run-dirs]");
	process.exit(code);
}

// ---------------------------------------------------------------- seeded randomness
const rng = makeRng(args.seed);
const idRng = makeRng(`${args.seed}/pi-ids`);
const runIdRng = makeRng(`${args.seed}/run-ids`);
const randInt = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1)); // inclusive
const chance = (p) => rng() < p;
const pick = (arr) => arr[Math.floor(rng() * arr.length)];

function uuidFrom(r) {
	// crypto.randomUUID() shape: 8-4-4-4-12 lowercase hex, version 4, variant 10xx.
	let s = "";
	for (let i = 0; i < 32; i++) s += Math.floor(r() * 16).toString(16);
	const variant = "89ab"[Math.floor(r() * 4)];
	return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-${variant}${s.slice(17, 20)}-${s.slice(20, 32)}`;
}
// pi's generateId() takes randomUUID().slice(0, 8): make entry ids reproducible.
crypto.randomUUID = () => uuidFrom(idRng);
syncBuiltinESMExports();
// A run id is crypto.randomUUID() in pi-subagents (subagent-executor.ts:
// `const runId = randomUUID()`, `asyncRunId = ... : randomUUID()`).
const newRunId = () => uuidFrom(runIdRng);

const { SessionManager } = await import(pathToFileURL(path.resolve(args.sm)).href);

// ---------------------------------------------------------------- content
// Prices in $ per million tokens; pi-ai computes cost.x = price.x / 1e6 * tokens.
const MODELS = [
	{ provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages", price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
	{ provider: "anthropic", id: "claude-haiku-4-5", api: "anthropic-messages", price: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } },
	{ provider: "openai", id: "gpt-5", api: "openai-responses", price: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 } },
	{ provider: "google", id: "gemini-2.5-pro", api: "google-generative-ai", price: { input: 1.25, output: 10, cacheRead: 0.31, cacheWrite: 0 } },
];
const AGENTS = {
	scout: ["Map where session files are opened and list the call sites", "Find every caller of parse_header and report the files", "Survey the test directory and summarize what each suite covers", "Locate the FUSE readdir handler and describe its caching"],
	worker: ["Implement the missing bounds check in read_entry and add a test", "Refactor store_scan to reuse the directory handle", "Add a --dry-run flag to the cleanup command", "Fix the off-by-one in the line index and update the golden files"],
	reviewer: ["Review the diff in fs/commit.c for races and error paths", "Check the new sizer code for integer overflow", "Review the test changes for flakiness", "Audit the error messages for consistency"],
};
const AGENT_NAMES = Object.keys(AGENTS);
const PROJECT_CWDS = ["/home/user/proj", "/home/user/work/api-server", "/home/user/src/pisessionfs", "/home/user/notes"];
const USER_ASKS = ["Can you look into why the store scan is slow on large projects?", "Please add support for forked sessions in the tree view.", "The mount hangs when a session file is truncated; investigate.", "Let's clean up the artifact handling and add tests.", "Review what changed since yesterday and plan the next step."];
const FILLER = ["The", "scan", "walks", "each", "project", "directory", "once", "and", "caches", "headers;", "the", "slow", "part", "is", "re-reading", "large", "files", "on", "every", "lookup.", "I", "checked", "src/store.c", "and", "fs/sessionops.c", "to", "confirm", "it."];
const sentence = (n) => Array.from({ length: n }, () => pick(FILLER)).join(" ");

let clock = Date.UTC(2026, 8, 10, 9, 0, 0); // message timestamps (ms), our own, not pi's
const tick = (lo = 500, hi = 20000) => (clock += randInt(lo, hi));

function makeUsage(model, big = false) {
	const input = randInt(big ? 2000 : 200, big ? 60000 : 12000);
	const output = randInt(50, big ? 6000 : 2500);
	const cacheRead = chance(0.7) ? randInt(1000, 120000) : 0;
	const cacheWrite = model.price.cacheWrite && chance(0.5) ? randInt(100, 20000) : 0;
	const p = model.price;
	const cost = {
		input: (p.input / 1000000) * input,
		output: (p.output / 1000000) * output,
		cacheRead: (p.cacheRead / 1000000) * cacheRead,
		cacheWrite: (p.cacheWrite / 1000000) * cacheWrite,
	};
	cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
	return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
}
function userMessage(text) {
	return { role: "user", content: [{ type: "text", text }], timestamp: tick() };
}
function assistantMessage(model, content, stopReason = "stop", big = false) {
	return { role: "assistant", content, api: model.api, provider: model.provider, model: model.id, usage: makeUsage(model, big), stopReason, timestamp: tick() };
}
const textBlock = (text) => ({ type: "text", text });

// ---------------------------------------------------------------- output bookkeeping
const store = path.resolve(args.store);
fs.mkdirSync(store, { recursive: true });
const rel = (p) => path.relative(store, p);
const sessions = []; // {file, kind, parentStem, runId, index, agent, inheritedCost?}
const artifacts = [];

// pi's project folder name: getDefaultSessionDirPath() in session-manager.js.
const projectDirName = (cwd) => `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;

// ---------------------------------------------------------------- artifacts (src/shared/artifacts.ts)
function getArtifactPaths(artifactsDir, runId, agent, index) {
	const suffix = index !== undefined ? `_${index}` : "";
	const safeAgent = agent.replace(/[^\w.-]/g, "_");
	const base = `${runId}_${safeAgent}${suffix}`;
	return {
		inputPath: path.join(artifactsDir, `${base}_input.md`),
		outputPath: path.join(artifactsDir, `${base}_output.md`),
		jsonlPath: path.join(artifactsDir, `${base}.jsonl`),
		transcriptPath: path.join(artifactsDir, `${base}_transcript.jsonl`),
		metadataPath: path.join(artifactsDir, `${base}_meta.json`),
	};
}
function writeFile(p, content) {
	fs.mkdirSync(path.dirname(p), { recursive: true });
	fs.writeFileSync(p, content, "utf-8");
	artifacts.push(rel(p));
}
const PROMPT_REDACTED = "[prompt redacted]";

// Projection of the child's messages into the three run artifacts.
// source: "foreground" (execution.ts runSync) or "async" (subagent-runner.ts).
function writeRunArtifacts({ artifactsDir, runId, agent, index, childIndex, source, cwd, messages, model, startedAt }) {
	const ap = getArtifactPaths(artifactsDir, runId, agent, index);
	// input: execution.ts / subagent-runner.ts write exactly this.
	writeFile(ap.inputPath, `# Task for ${agent}\n\n${PROMPT_REDACTED}; live Prompt Audit only.\n`);

	// transcript: child-transcript.ts createChildTranscriptWriter records.
	let ts = startedAt;
	const base = (recordType) => {
		ts += randInt(5, 400);
		return { version: 1, recordType, source, runId, agent, ...(childIndex !== undefined ? { childIndex } : {}), cwd, ts, timestamp: new Date(ts).toISOString() };
	};
	const textOf = (m) => m.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
	const tr = [{ ...base("message"), sourceEventType: "initial_prompt", role: "user", text: `${PROMPT_REDACTED}; live Prompt Audit only.`, message: { role: "user", content: [{ type: "text", text: `${PROMPT_REDACTED}; live Prompt Audit only.` }] } }];
	for (const m of messages) {
		const u = m.usage;
		tr.push({
			...base("message"), sourceEventType: "message_end", role: m.role, text: textOf(m),
			...(m.model ? { model: m.model } : {}), ...(m.stopReason ? { stopReason: m.stopReason } : {}),
			...(u ? { usage: { input: u.input, output: u.output, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite, cost: u.cost.total } } : {}),
			message: m,
		});
	}
	writeFile(ap.transcriptPath, tr.map((r) => JSON.stringify(r)).join("\n") + "\n");

	// .jsonl: the foreground runner mirrors every child event (projectChildSessionEventForJson);
	// the background runner writes no .jsonl artifact.
	if (source === "foreground") {
		const ev = [{ type: "agent_start" }, { type: "turn_start" }];
		for (const m of messages) {
			ev.push({ type: "message_start", message: m });
			if (m.role === "assistant") ev.push({ type: "message_update", usage: m.usage, assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: textOf(m).slice(0, 40) } });
			ev.push({ type: "message_end", message: m });
			if (m.role === "assistant") ev.push({ type: "turn_end", message: m, toolResults: [] });
		}
		ev.push({ type: "agent_end", messages });
		writeFile(ap.jsonlPath, ev.map((e) => JSON.stringify(e)).join("\n") + "\n");
	}

	// output: the child's final assistant text (formatOutputArtifactContent passes it through).
	const last = [...messages].reverse().find((m) => m.role === "assistant");
	const output = last ? textOf(last) : "";
	writeFile(ap.outputPath, output);

	// meta: Usage = {input, output, cacheRead, cacheWrite, cost: number, turns}.
	const assistants = messages.filter((m) => m.role === "assistant");
	const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, turns: assistants.length };
	for (const m of assistants) {
		usage.input += m.usage.input;
		usage.output += m.usage.output;
		usage.cacheRead += m.usage.cacheRead;
		usage.cacheWrite += m.usage.cacheWrite;
		usage.cost += m.usage.cost.total;
	}
	const modelRef = `${model.provider}/${model.id}`;
	const durationMs = ts - startedAt + randInt(1000, 90000);
	const meta = source === "foreground"
		// execution.ts persistSingleResultMetadata(); undefined fields drop out of JSON.
		? { runId, agent, task: PROMPT_REDACTED, exitCode: 0, usage, model: model.id, attemptedModels: [modelRef], modelAttempts: [{ model: modelRef, success: true, exitCode: 0, usage }], durationMs, toolCount: randInt(0, 12), transcriptPath: ap.transcriptPath, timestamp: startedAt + durationMs }
		// subagent-runner.ts runSingleStep() -> persistStepArtifacts({metadata}).
		: { runId, agent, task: PROMPT_REDACTED, exitCode: 0, model: model.id, attemptedModels: [modelRef], modelAttempts: [{ model: modelRef, success: true, exitCode: 0, usage }], usage, transcriptPath: ap.transcriptPath, timestamp: startedAt + durationMs };
	writeFile(ap.metadataPath, JSON.stringify(meta, null, 2));
	return { paths: ap, usage, output };
}

// ---------------------------------------------------------------- children
function childTurns(agent, task, model) {
	const msgs = [];
	const n = randInt(1, 3);
	for (let t = 0; t < n; t++) {
		const final = t === n - 1;
		const text = final
			? `## ${agent} result\n\n${sentence(randInt(12, 30))}\n\n- ${sentence(6)}\n- ${sentence(6)}`
			: `${sentence(randInt(6, 14))} Next I will ${pick(["read", "grep", "edit"])} more files.`;
		msgs.push(assistantMessage(model, [textBlock(text)], "stop", t === 0));
	}
	return msgs;
}
// deriveChildSessionName(): `${agent}: ${task excerpt (60 chars)}`.
const childSessionName = (agent, task) => `${agent}: ${task.length > 60 ? `${task.slice(0, 59)}…` : task}`;

// The child's own AgentSession: prompt runtime sets the session name, then the
// task arrives as the user message and the model answers.
// The name comes from the task as the caller gave it, before wrapForkTask().
function writeChild(sm, agent, task, model, nameTask = task) {
	sm.appendSessionInfo(childSessionName(agent, nameTask));
	const user = userMessage(task);
	sm.appendMessage(user);
	const msgs = [user];
	for (const m of childTurns(agent, task, model)) {
		sm.appendMessage(m);
		msgs.push(m);
	}
	return msgs;
}

const DEFAULT_FORK_PREAMBLE =
	"You are a delegated subagent running from a fork of the parent session. " +
	"Treat the inherited conversation as reference-only context, not a live thread to continue. " +
	"Do not continue or answer prior messages as if they are waiting for a reply. " +
	"Your sole job is to execute the task below and return a focused result for that task using your tools.";
const wrapForkTask = (task) => `${DEFAULT_FORK_PREAMBLE}\n\nTask:\n${task}`;

// ---------------------------------------------------------------- plan
const runsFor = [];
for (let p = 0; p < args.parents; p++) runsFor.push(args.runsPerParent ?? 0);
if (args.runsPerParent === null) for (let r = 0; r < args.runs; r++) runsFor[r % args.parents]++;
// Which parents get a fork: spread evenly, first parent always first.
const forkAt = new Set();
for (let f = 0; f < args.forks; f++) forkAt.add(Math.floor((f * args.parents) / args.forks));
const nProjects = Math.min(PROJECT_CWDS.length, Math.max(1, Math.ceil(args.parents / 2)));
let twoChildRuns = 0;
let totalRuns = 0;

for (let p = 0; p < args.parents; p++) {
	const cwd = PROJECT_CWDS[p % nProjects];
	const projectDir = path.join(store, projectDirName(cwd));
	const model = MODELS[p % 2 === 0 ? 0 : randInt(0, MODELS.length - 1)];
	const parent = SessionManager.create(cwd, projectDir);
	parent.appendModelChange(model.provider, model.id);
	parent.appendThinkingLevelChange(pick(["off", "medium", "high"]));
	parent.appendMessage(userMessage(pick(USER_ASKS)));
	parent.appendMessage(assistantMessage(model, [textBlock(`Let me get an overview first. ${sentence(10)}`)], "stop", true));
	const parentFile = parent.getSessionFile();
	const stem = path.basename(parentFile, ".jsonl");
	const sessionRootBase = path.join(path.dirname(parentFile), stem); // getSubagentSessionRoot()
	const artifactsDir = path.join(path.dirname(parentFile), "subagent-artifacts"); // getArtifactsDir(parentFile)
	sessions.push({ file: parentFile, kind: "parent", parentStem: null, runId: null, index: null, agent: null });

	// Every subagent call is an assistant toolCall in the parent, answered by a toolResult.
	const launch = (argsObj) => {
		const callId = `toolu_${uuidFrom(rng).replace(/-/g, "").slice(0, 24)}`;
		parent.appendMessage(assistantMessage(model, [textBlock(sentence(8)), { type: "toolCall", id: callId, name: "subagent", arguments: argsObj }], "toolUse"));
		return callId;
	};
	const finish = (callId, text, details) => {
		parent.appendMessage({ role: "toolResult", toolCallId: callId, toolName: "subagent", content: [{ type: "text", text }], details, isError: false, timestamp: tick() });
	};
	const resultFor = (agent, r, sessionFile, m) => ({ agent, exitCode: 0, model: m.id, usage: r.usage, sessionFile, artifactPaths: r.paths, transcriptPath: r.paths.transcriptPath });

	const nRuns = runsFor[p];
	for (let r = 0; r < nRuns; r++) {
		totalRuns++;
		const runId = newRunId();
		const sessionRoot = path.join(sessionRootBase, runId);
		// Every third run of the store (the 2nd, 5th, 8th, ...) has two children.
		const two = totalRuns % 3 === 2;
		if (two) twoChildRuns++;
		const agents = two ? [pick(AGENT_NAMES), pick(AGENT_NAMES)] : [pick(AGENT_NAMES)];
		const tasks = agents.map((a) => pick(AGENTS[a]));
		const callId = launch(two ? { tasks: agents.map((a, i) => ({ agent: a, task: tasks[i] })) } : { agent: agents[0], task: tasks[0] });
		fs.mkdirSync(sessionRoot, { recursive: true });
		const results = [];
		for (let i = 0; i < agents.length; i++) {
			const childModel = chance(0.7) ? model : pick(MODELS);
			const sessionFile = path.join(sessionRoot, `run-${i}`, "session.jsonl");
			const startedAt = clock;
			const child = SessionManager.open(sessionFile, undefined, cwd); // child-session.ts, storage kind "file"
			const msgs = writeChild(child, agents[i], tasks[i], childModel);
			const art = writeRunArtifacts({ artifactsDir, runId, agent: agents[i], index: i, childIndex: i, source: "foreground", cwd, messages: msgs, model: childModel, startedAt });
			sessions.push({ file: sessionFile, kind: "run", parentStem: stem, runId, index: i, agent: agents[i] });
			results.push(resultFor(agents[i], art, sessionFile, childModel));
		}
		finish(callId, results.map((x) => `${x.agent} finished.`).join("\n"), { mode: two ? "parallel" : "single", runId, context: "fresh", results });
		// One run writes a saved output under outputs/<runId>/.
		if (p === 0 && r === 0) writeFile(path.join(artifactsDir, "outputs", runId, "notes.md"), `# Notes from ${agents[0]}\n\n${sentence(20)}\n\n- ${sentence(7)}\n- ${sentence(7)}\n`);
	}

	if (forkAt.has(p)) {
		// A context:"fork" run (fork-context.ts createForkContextResolver): the
		// parent leaf is the assistant message that calls the subagent tool.
		const agent = pick(AGENT_NAMES);
		const task = pick(AGENTS[agent]);
		const runId = newRunId();
		const callId = launch({ agent, task, context: "fork" });
		const leafId = parent.getLeafId();
		const forksDir = path.join(path.dirname(parentFile), path.basename(parentFile, ".jsonl"), "forks");
		const sourceManager = SessionManager.open(parentFile, forksDir);
		const forkFile = sourceManager.createBranchedSession(leafId);
		if (!forkFile || !fs.existsSync(forkFile)) throw new Error(`fork was not written: ${forkFile}`);
		if (args.emptyRunDirs) fs.mkdirSync(path.join(sessionRootBase, runId), { recursive: true }); // executor mkdirs sessionRoot even for forks
		const inheritedCost = sourceManager.getEntries().reduce((s, e) => s + (e.type === "message" && e.message.role === "assistant" ? e.message.usage?.cost?.total ?? 0 : 0), 0);
		const childModel = model;
		const startedAt = clock;
		const child = SessionManager.open(forkFile, undefined, cwd);
		const msgs = writeChild(child, agent, wrapForkTask(task), childModel, task);
		const art = writeRunArtifacts({ artifactsDir, runId, agent, index: 0, childIndex: 0, source: "foreground", cwd, messages: msgs, model: childModel, startedAt });
		sessions.push({ file: forkFile, kind: "fork", parentStem: stem, runId, index: 0, agent, inheritedCost });
		finish(callId, `${agent} finished.`, { mode: "single", runId, context: "fork", results: [resultFor(agent, art, forkFile, childModel)] });
	}

	if (p === 0) {
		// One async (background) run: artifacts only, no session file. The
		// runner names artifacts by the async id and, for a one-step run, with no index.
		const agent = "scout";
		const task = pick(AGENTS[agent]);
		const asyncId = newRunId();
		const callId = launch({ agent, task, async: true });
		finish(callId, `Async run started: ${asyncId}`, { mode: "single", results: [], asyncId, asyncDir: `/tmp/pi-subagents-uid-1000/async-subagent-runs/${asyncId}` });
		if (args.emptyRunDirs) fs.mkdirSync(path.join(sessionRootBase, newRunId()), { recursive: true });
		const msgs = [userMessage(task), ...childTurns(agent, task, model)];
		writeRunArtifacts({ artifactsDir, runId: asyncId, agent, index: undefined, childIndex: 0, source: "async", cwd, messages: msgs, model, startedAt: clock });
	}

	parent.appendMessage(assistantMessage(model, [textBlock(`Summary: ${sentence(randInt(15, 30))}`)], "stop"));
}

// ---------------------------------------------------------------- read back with pi
let total = 0;
const out = [];
for (const s of sessions) {
	const sm = SessionManager.open(s.file);
	let cost = 0;
	let n = 0;
	for (const e of sm.getEntries()) {
		if (e.type === "message" && e.message.role === "assistant") {
			cost += e.message.usage?.cost?.total ?? 0;
			n++;
		}
	}
	if (sm.getSessionFile() !== path.resolve(s.file)) throw new Error(`pi reopened ${s.file} as ${sm.getSessionFile()}`);
	total += cost;
	out.push({ path: rel(s.file), kind: s.kind, parentStem: s.parentStem, runId: s.runId, index: s.index, agent: s.agent, assistantMessages: n, cost, ...(s.kind === "fork" ? { inheritedCost: s.inheritedCost } : {}) });
}
process.stdout.write(JSON.stringify({
	store,
	seed: args.seed,
	counts: { parents: args.parents, runs: totalRuns, twoChildRuns, forks: args.forks, asyncRuns: args.parents > 0 ? 1 : 0, sessionFiles: out.length, artifacts: artifacts.length },
	sessions: out,
	artifacts,
	total,
}, null, 1) + "\n");
