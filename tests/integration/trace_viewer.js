// trace_viewer.js - opens a trace from `locktime report --format trace` in speedscope (the npm package's own
// page, from disk, in headless Chromium: chromium.js) the way its command line does (a script beside the page
// that calls speedscope.loadFileFromBase64, named in the URL's #localProfilePath), switches to the Sandwich
// view and steps through the profiles (key "n").
//   node trace_viewer.js TRACE.json SPEEDSCOPE_DIR SCREENSHOT.png
// Prints one JSON object: {title, profiles: [{name, symbols: [{name, total_ms}]}], errors} - per profile (a
// thread) its name as speedscope shows it and the Sandwich view's rows: each frame name and its total time.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { run } = require("./chromium.js");

const [trace, dir, shot] = process.argv.slice(2);

// "114.68ms (100%)", "100.89µs (0.09%)", "1.20s" as ms.
function ms(text) {
	const m = /^([0-9.]+)(ns|µs|ms|s)/.exec(text.trim());
	return m ? +m[1] * { ns: 1e-6, "µs": 1e-3, ms: 1, s: 1e3 }[m[2]] : null;
}

async function main({ cmd, value, errors, waitFor }) {
	const loader = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lt-speedscope-")), "load.js");
	fs.writeFileSync(loader, "speedscope.loadFileFromBase64(" + JSON.stringify(path.basename(trace)) + ", " +
		JSON.stringify(fs.readFileSync(trace).toString("base64")) + ")");
	const pause = (n) => new Promise((r) => setTimeout(r, n));
	const key = async (k) => {
		for (const type of ["keyDown", "keyUp"])
			await cmd("Input.dispatchKeyEvent", { type, key: k, text: type === "keyDown" ? k : undefined });
		await pause(300);
	};
	await cmd("Emulation.setDeviceMetricsOverride", { width: 1280, height: 700, deviceScaleFactor: 1, mobile: false });
	const loaded = waitFor("Page.loadEventFired", 20000);
	await cmd("Page.navigate", { url: "file://" + path.resolve(dir, "dist/release/index.html") + "#localProfilePath=" + loader });
	await loaded;
	for (let i = 0; i < 100 && !(await value("document.title")).endsWith(" - speedscope"); i++)
		await pause(100);
	const out = { title: await value("document.title"), profiles: [] };
	const count = await value("document.querySelectorAll('tr').length - 1"); // the profile list's rows, its head aside
	const png = await cmd("Page.captureScreenshot", { format: "png" }); // the first thread's, in time order
	fs.writeFileSync(shot, Buffer.from(png.data, "base64"));
	await key("3"); // the Sandwich view: a row per frame name with its total time
	for (let i = 0; i < count; i++) {
		const lines = (await value("document.body.innerText")).split("\n").map((l) => l.trim());
		const head = lines.findIndex((l) => / \(\d+\/\d+\)$/.test(l));
		const symbols = [];
		for (let k = lines.findIndex((l) => l.startsWith("Total")) + 1; k + 2 < lines.length && ms(lines[k]) !== null; k += 3)
			symbols.push({ name: lines[k + 2], total_ms: ms(lines[k]) });
		out.profiles.push({ name: head >= 0 ? lines[head].replace(/ \(\d+\/\d+\)$/, "") : null, symbols });
		await key("n");
	}
	fs.rmSync(path.dirname(loader), { recursive: true, force: true });
	out.errors = errors.filter((e) => !/WebGL|GL Driver/.test(e)); // the software renderer's notices, not the page's
	return out;
}

run(main, 60000);
