// Differential test of `pisession fork-from` against pi 1.6.0's
// SessionManager.forkFrom(sourcePath, targetCwd, sessionDir).
//
//   node forkfrom.mjs --sm PATH/session-manager.js --pisession build/pisession
//                     --work DIR [-v] FILE|DIR...
//
// The session files are the given ones (a directory: its *.jsonl files, at
// any depth; files with the same bytes once) and sessions this script
// writes (gen/): some with pi's own SessionManager (branches, labels,
// compactions, a name), some raw (version 1 and 2 files, which forkFrom
// copies unmigrated; lines that are blank, not JSON, JSON values that are
// not objects, falsy ones, a second "session" line, odd numbers and
// escapes, invalid UTF-8, no final newline; files pi refuses: empty, a
// first value that is no header, a header without a string id).
// Each file is forked once per target cwd (some with "//", "." and "..",
// "/" itself), every other time also named (pi: appendSessionInfo on the
// SessionManager forkFrom returns).  The source is a fresh copy at one
// path for both; ours must leave it byte-identical.  The two new files
// must agree line by line, byte for byte, after the header's id and
// timestamp and the session_info's id and timestamp are replaced by
// placeholders; the file's name must be pi's for its header.  A file pi
// refuses must be refused by pisession too, with no file made.
// Prints "check-diff-forkfrom: N passed, M failed".
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const opts = {};
const inputs = [];
for (let i = 0; i < args.length; i++) {
	if (args[i] === "-v") opts.v = true;
	else if (args[i].startsWith("--")) opts[args[i].slice(2)] = args[++i];
	else inputs.push(args[i]);
}
const pisession = resolve(opts.pisession);
const work = resolve(opts.work);
const { SessionManager } = await import(pathToFileURL(resolve(opts.sm)).href);

let passed = 0, failed = 0;
const fail = (what) => {
	failed++;
	console.log(`FAIL ${what}`);
};

// ---- sessions of our own ----------------------------------------------------
const gen = join(work, "gen");
rmSync(gen, { recursive: true, force: true });
mkdirSync(gen, { recursive: true });
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 });
const assistant = (text) => ({
	role: "assistant", content: [{ type: "text", text }], api: "fake", provider: "fake", model: "fake-1",
	usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
	stopReason: "stop", timestamp: 2,
});
{
	const dir = join(gen, "pi");
	mkdirSync(dir, { recursive: true });
	const sm = SessionManager.create("/home/u/proj", dir);
	sm.appendModelChange("fake", "fake-1");
	sm.appendThinkingLevelChange("off");
	const u1 = sm.appendMessage(user("first question"));
	const a1 = sm.appendMessage(assistant("first answer"));
	const lab = sm.appendLabelChange(a1, "ans");
	sm.appendMessage(user("second"));
	sm.appendCompaction("summary kept from a label", lab, 1234);
	sm.appendSessionInfo("the source's name");
	sm.branch(u1);
	sm.appendMessage(user("another branch \u2028 \ud83d\ude00"));
	sm.appendMessage(assistant("branch answer"));
	sm.branchWithSummary(a1, "summary of the left branch");
	sm.appendMessage(user("after a branch summary"));
	sm.appendCustomEntry("ext", { k: [1, 2] });
}
const raw = (name, text) => writeFileSync(join(gen, `${name}.jsonl`), text);
const H = (extra = "") => `{"type":"session","version":3,"id":"raw-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home//u/./p/../q/"${extra}}\n`;
raw("odd-lines", [
	H(',"parentSession":"/elsewhere/x.jsonl","extra":{"b":1,"a":2}'),
	`{"type":"model_change","id":"m1","timestamp":"2026-01-01T00:00:01.000Z","provider":"p","modelId":"x"}\n`,
	`{"parentId":"m1","id":"u1","type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"h\\u00e9llo \\u2028 \\ud83d\\ude00 \\ud800 \\"q\\" \\/","timestamp":1}}\n`,
	`{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","n":[1e21,0.1,-0,1E5,1.50,123456789012345678901234567890,-1e-7],"2":"two","b":1,"1":"one","dup":1,"dup":2}}\r\n`,
	`\n`, `   \t\n`, `not json at all\n`, `{"type":"message",\n`,
	`null\n`, `false\n`, `0\n`, `""\n`, `-0.0\n`,
	`42\n`, `"a string"\n`, `[1,{"type":"session"}]\n`, `true\n`, `{}\n`,
	`{"type":"session","version":2,"id":"second-header","cwd":"/nope"}\n`,
	`{"type":"Session","id":"not-a-header"}\n`,
	`{"type":"label","id":"l1","parentId":"a1","targetId":"u1","label":"x"}\n`,
	`{"type":"message","id":"b\\u0000ad","parentId":"l1","message":{"role":"user","content":"nul \\u0000 inside"}}\n`,
	`{"type":"message","id":"u9","parentId":"zz","message":{"role":"user","content":"bad \xff\xfe utf-8 \xe2\x82"}}\n`,
	`{"type":"message","id":"last","parentId":"u9","message":{"role":"user","content":"no final newline"}}`,
].join(""));
raw("bad-utf8", Buffer.concat([Buffer.from(H() + `{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"bad `),
	Buffer.from([0xff, 0xfe, 0x20, 0xe2, 0x82, 0x20, 0xed, 0xa0, 0x80, 0x20, 0xf0, 0x9f, 0x98]), Buffer.from(`"}}\n`),
	Buffer.from([0xc3]), Buffer.from(`{"type":"x","id":"after-a-bad-byte"}\n`)]));
raw("last-line-no-id", H() + `{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"q"}}\n{"type":"custom","customType":"x"}\n`);
raw("last-line-not-object", H() + `{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"q"}}\n[7]\n`);
raw("last-id-number", H() + `{"type":"message","id":17,"parentId":null,"message":{"role":"user","content":"q"}}\n`);
raw("header-only", H());
raw("header-only-no-newline", H().trimEnd());
raw("blank-then-header", `\n\nnot json\nnull\n` + H() + `{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"q"}}\n`);
raw("v2", `{"type":"session","version":2,"id":"raw-2","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n` +
	`{"type":"message","id":"h1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"x","content":"hook","display":true,"timestamp":1}}\n` +
	`{"type":"compaction","id":"c1","parentId":"h1","summary":"s","firstKeptEntryIndex":1,"tokensBefore":9}\n`);
raw("v1", `{"type":"session","id":"raw-v1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n` +
	`{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"v1"}}\n` +
	`{"type":"compaction","summary":"s","firstKeptEntryIndex":1,"tokensBefore":9}\n`);
raw("refused-empty", "");
raw("refused-blank", "\n \n");
raw("refused-not-header", `{"type":"message","id":"u1"}\n` + H());
raw("refused-id-not-string", `{"type":"session","version":3,"id":5,"cwd":"/p"}\n`);
raw("refused-array-first", `[1]\n` + H());
raw("refused-bom", `\ufeff` + H());

// ---- the files ----------------------------------------------------------------
const files = [];
const seen = new Set();
function add(p) {
	const st = statSync(p);
	if (st.isDirectory()) {
		for (const n of readdirSync(p).sort()) add(join(p, n));
		return;
	}
	if (!p.endsWith(".jsonl")) return;
	const h = createHash("sha1").update(readFileSync(p)).digest("hex");
	if (seen.has(h)) return;
	seen.add(h);
	files.push(p);
}
for (const p of [...inputs, gen]) add(resolve(p));

const run = (argv) => spawnSync(pisession, argv, { encoding: "utf8", maxBuffer: 1 << 30 });
const lines = (text) => text.split("\n").slice(0, -1);
const normalize = (ls) => ls.map((l, i) => {
	if (i === 0) return l.replace(/^(\{"type":"session","version":3,"id":")[^"]*(","timestamp":")[^"]*"/, '$1ID$2NOW"');
	if (i === ls.length - 1 && l.startsWith('{"type":"session_info"'))
		return l.replace(/^(\{"type":"session_info","id":")[^"]*"/, '$1NEW"').replace(/"timestamp":"[^"]*"(,"name":[^]*)$/, '"timestamp":"NOW"$1');
	return l;
});

const TARGETS = ["/home/u/other", "/a//b/./c/../d/", "/", "/x:y\\z-w"];
const NAMES = ["  renamed\r\n\r\nfork ", "Straße\u00a0\u3000", "plain"];
let forks = 0, refusals = 0;
for (const file of files) {
	const tag = basename(file);
	const src = join(work, "src");
	rmSync(src, { recursive: true, force: true });
	mkdirSync(src, { recursive: true });
	const copy = join(src, tag);
	const bytes = readFileSync(file);
	const fresh = () => writeFileSync(copy, bytes);
	for (let t = 0; t < TARGETS.length; t++) {
		const target = TARGETS[t];
		const name = (forks + t) % 2 ? NAMES[forks % NAMES.length] : null;
		const what = `${tag} -> ${target}${name ? " (named)" : ""}`;
		forks++;
		const ours = join(work, "ours"), theirs = join(work, "theirs");
		for (const d of [ours, theirs]) {
			rmSync(d, { recursive: true, force: true });
			mkdirSync(d);
		}
		fresh();
		const r = run(["fork-from", copy, target, "--dir", ours, ...(name ? ["--name", name] : [])]);
		const made = readdirSync(ours);
		if (!readFileSync(copy).equals(bytes)) {
			fail(`${what}: pisession fork-from changed the source`);
			continue;
		}
		fresh();
		let pm = null, piError = null;
		try {
			pm = SessionManager.forkFrom(copy, target, theirs);
			if (name) pm.appendSessionInfo(name);
		} catch (e) {
			piError = e;
		}
		if (piError) {
			if (t === 0) refusals++;
			if (r.status === 0 || made.length) fail(`${what}: pi refuses (${piError.message}), pisession fork-from did not`);
			else passed++;
			continue;
		}
		if (r.status !== 0 || made.length !== 1 || r.stdout !== `${join(ours, made[0])}\n`) {
			fail(`${what}: pisession fork-from: status ${r.status}, ${made.length} files, said ${JSON.stringify(r.stdout)} ${r.stderr}`);
			continue;
		}
		const ourText = readFileSync(join(ours, made[0]), "utf8");
		const h = JSON.parse(ourText.split("\n")[0]);
		if (made[0] !== `${h.timestamp.replace(/[:.]/g, "-")}_${h.id}.jsonl` || !/^[0-9a-f]{8}-[0-9a-f]{4}-7/.test(h.id)) {
			fail(`${what}: the file's name ${made[0]} is not pi's for its header`);
			continue;
		}
		const piText = readFileSync(pm.getSessionFile(), "utf8");
		const a = normalize(lines(ourText)), b = normalize(lines(piText));
		let diff = -1;
		for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) { diff = i; break; }
		if (diff >= 0 || !ourText.endsWith("\n")) {
			fail(`${what}: line ${diff + 1} differs (${a.length} lines, pi ${b.length})\n  ours: ${(a[diff] ?? "(none)").slice(0, 400)}\n  pi:   ${(b[diff] ?? "(none)").slice(0, 400)}`);
			continue;
		}
		// pi itself opens what we wrote.
		try {
			SessionManager.open(join(ours, made[0]), join(work, "probe"));
		} catch (e) {
			fail(`${what}: pi cannot open our fork: ${e.message}`);
			continue;
		}
		passed++;
		if (opts.v) console.log(`ok ${what}: ${a.length} lines`);
	}
}
console.log(`check-diff-forkfrom: ${files.length} files, ${forks} forks compared, ${refusals} files pi refuses`);
console.log(`check-diff-forkfrom: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
