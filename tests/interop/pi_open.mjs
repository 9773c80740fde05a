// Opens a COPY of a session file with pi's own SessionManager and prints
// what pi reads from it, as one JSON object on stdout:
//
//   node pi_open.mjs SESSION_MANAGER_JS COPY_OF_SESSION.jsonl
//
//   {"ok": true, "leafId", "name", "labels": {entryId: label},
//    "entryIds": [...file order...], "context": buildSessionContext(),
//    "unchanged": true when open() left the file byte-identical}
//
// SessionManager.open() rewrites files that need a migration or a final
// newline, which is why it is only ever given a copy; "unchanged" tells
// whether pi found anything to fix.  A load error prints {"ok": false, "error"}.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [smPath, file] = process.argv.slice(2);
if (!smPath || !file) {
	console.error("usage: node pi_open.mjs SESSION_MANAGER_JS FILE");
	process.exit(2);
}
const { SessionManager } = await import(pathToFileURL(smPath).href);
const before = readFileSync(file);
let out;
try {
	const sm = SessionManager.open(file);
	const entries = sm.getEntries();
	const labels = {};
	for (const e of entries) {
		const label = sm.getLabel(e.id);
		if (label !== undefined) labels[e.id] = label;
	}
	out = {
		ok: true,
		leafId: sm.getLeafId(),
		name: sm.getSessionName() ?? null,
		labels,
		entryIds: entries.map((e) => e.id),
		context: sm.buildSessionContext(),
		unchanged: Buffer.compare(before, readFileSync(file)) === 0,
	};
} catch (err) {
	out = { ok: false, error: String(err && err.stack ? err.stack : err) };
}
process.stdout.write(JSON.stringify(out) + "\n");
