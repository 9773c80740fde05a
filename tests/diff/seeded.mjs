// Seeded randomness shared by the test generators (tests/diff/gen.mjs,
// tests/gen/gen_subagents.mjs): a seed string hashed into sfc32's state,
// so that one seed reproduces a store on every machine.
export function hashSeed(s) {
	let h = 1779033703 ^ s.length;
	for (let i = 0; i < s.length; i++) {
		h = Math.imul(h ^ s.charCodeAt(i), 3432918353);
		h = (h << 13) | (h >>> 19);
	}
	return () => {
		h = Math.imul(h ^ (h >>> 16), 2246822507);
		h = Math.imul(h ^ (h >>> 13), 3266489909);
		return (h ^= h >>> 16) >>> 0;
	};
}
export function sfc32(a, b, c, d) {
	return () => {
		a |= 0; b |= 0; c |= 0; d |= 0;
		const t = (((a + b) | 0) + d) | 0;
		d = (d + 1) | 0;
		a = b ^ (b >>> 9);
		b = (c + (c << 3)) | 0;
		c = (c << 21) | (c >>> 11);
		c = (c + t) | 0;
		return (t >>> 0) / 4294967296;
	};
}
export function makeRng(seed) {
	const h = hashSeed(String(seed));
	const r = sfc32(h(), h(), h(), h());
	for (let i = 0; i < 16; i++) r();
	return r;
}
