// tree.txt against pi 1.6.0's own /tree (TreeSelectorComponent with the
// "all" filter), no mount: for every session file given (or found in a
// directory given), pi renders its tree and `pisession cat FILE tree.txt`
// draws it, and each line must agree: the same tree prefix (pi's fold
// marker ⊟/⊞ read as ─), the same active-path mark, the same label, and a
// text that is a prefix of pi's (pisession cuts it at 60 characters and
// leaves out pi's "user: " and "assistant: "), whitespace runs as one space.
//
//   node tree.mjs --sm PATH/dist/core/session-manager.js --pisession PISESSION --work DIR FILE|DIR...
import { execFileSync } from "node:child_process";
import { copyFileSync, readdirSync, statSync } from "node:fs";
import { join, dirname } from "node:path";

const args = process.argv.slice(2);
const opt = (name) => args.splice(args.indexOf(name), 2)[1];
const sm = opt("--sm"), tool = opt("--pisession"), work = opt("--work");
const dist = dirname(dirname(sm));
const { SessionManager } = await import(sm);
const { initTheme } = await import(join(dist, "modes/interactive/theme/theme.js"));
const { TreeSelectorComponent } = await import(join(dist, "modes/interactive/components/tree-selector.js"));
initTheme("dark");

const files = [];
const walk = (p) => {
	if (statSync(p).isDirectory()) for (const n of readdirSync(p).sort()) walk(join(p, n));
	else if (p.endsWith(".jsonl")) files.push(p);
};
args.forEach(walk);

const one = (s) => s.replace(/\s+/g, " ").trim();
const mineRe = /^([│├└─ ]*)(• )?(\d{4,}-\S+?)(?: {2}(.*?))?(?: {2}\[(.*)\])?$/;
const piRe = /^([│├└─ ]*)(• )?(?:\[([^\]]*)\] )?(.*)$/s; // a label may hold newlines
let failed = 0, compared = 0, lines = 0;
for (const [n, file] of files.entries()) {
	// pi rewrites what it opens when it migrates it: a copy.
	const copy = join(work, `${n}.jsonl`);
	copyFileSync(file, copy);
	let mine;
	try {
		mine = execFileSync(tool, ["cat", file, "tree.txt"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
			.split("\n").slice(0, -1);
	} catch {
		continue; // not a session
	}
	let pi, selected;
	try {
		const m = SessionManager.open(copy);
		const comp = new TreeSelectorComponent(m.getTree(), m.getLeafId(), 1e7, () => {}, () => {}, () => {}, undefined, "all");
		const raw = comp.treeList.render(100000).slice(0, -1).map((l) => l.replace(/\x1b\[[0-9;]*m/g, ""));
		selected = raw.findIndex((l) => l.startsWith("›"));
		pi = raw
			.map((l) => [...l.replace(/\x1b\[[0-9;]*m/g, "")].slice(2).join("").replace(/[⊟⊞]/g, "─").trimEnd());
	} catch (e) {
		console.log(`skip ${file}: pi cannot render it (${e.message})`);
		continue;
	}
	if (pi.length === 1 && pi[0] === "No entries found") pi = [];
	compared++;
	const bad = [];
	if (mine.length !== pi.length) bad.push(`${mine.length} lines, pi ${pi.length}`);
	// pi selects the current leaf when it opens.
	const leaf = mine.findIndex((l) => l.endsWith("  ← leaf"));
	if (pi.length && leaf !== selected) bad.push(`the leaf is line ${leaf + 1}, pi selects line ${selected + 1}`);
	for (let i = 0; i < Math.min(mine.length, pi.length) && bad.length < 5; i++) {
		// The leaf is pi's selected line; pisession marks it at the end.
		const a = mineRe.exec(mine[i].replace(/ {2}← leaf$/, "")), b = piRe.exec(pi[i]);
		const text = one((a?.[4] ?? "").replace(/…$/, ""));
		const piText = one(b[4].replace(/^(user|assistant): /, ""));
		if (!a || a[1] !== b[1] || !!a[2] !== !!b[2] || (a[5] ?? "") !== one(b[3] ?? "") ||
		    !(piText.startsWith(text) || (text === "" && piText === ""))) {
			bad.push(`line ${i + 1}:\n  mine ${mine[i]}\n  pi   ${pi[i]}`);
		}
	}
	lines += mine.length;
	if (bad.length) {
		failed++;
		console.log(`FAIL ${file}\n${bad.join("\n")}`);
	}
}
console.log(`${compared} sessions, ${lines} lines compared, ${failed} differ`);
// The line tests/check-all.sh counts a stage by.
console.log(`check-diff-tree: ${compared - failed} passed, ${failed} failed`);
process.exit(failed || !compared ? 1 : 0);
