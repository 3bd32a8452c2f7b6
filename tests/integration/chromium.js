// chromium.js - Debian's headless Chromium driven over the DevTools protocol on a pipe (nothing but node itself),
// for the tests that open a page as a person would (report_page.js, trace_viewer.js).
//   run(main, timeoutMs): starts Chromium, opens one tab and calls main(page) with page = { cmd(method, params),
//   value(expression) (its value, returned by value; throws on an exception), errors (console errors and
//   warnings, uncaught exceptions, log entries of those levels, as they come) }; prints what main returns as
//   one JSON line and exits 0, or prints the error and Chromium's stderr and exits 1 (2 past timeoutMs).
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

function run(main, timeoutMs) {
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), "lt-chromium-"));
	const chromium = spawn("chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + profile, "--remote-debugging-pipe", "about:blank"],
		{ stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] });
	let stderr = "";
	chromium.stderr.on("data", (d) => { stderr += d; });
	const toBrowser = chromium.stdio[3], fromBrowser = chromium.stdio[4];

	let nextId = 1, pending = new Map(), listeners = [], buffered = "";
	fromBrowser.on("data", (chunk) => {
		buffered += chunk.toString("utf8");
		let end;
		while ((end = buffered.indexOf("\0")) >= 0) {
			const msg = JSON.parse(buffered.slice(0, end));
			buffered = buffered.slice(end + 1);
			if (msg.id && pending.has(msg.id)) {
				const { resolve, reject } = pending.get(msg.id);
				pending.delete(msg.id);
				if (msg.error) reject(new Error(JSON.stringify(msg.error)));
				else resolve(msg.result);
			} else if (msg.method) {
				listeners.forEach((l) => l(msg));
			}
		}
	});
	function send(method, params = {}, sessionId) {
		const id = nextId++;
		const msg = { id, method, params };
		if (sessionId) msg.sessionId = sessionId;
		toBrowser.write(JSON.stringify(msg) + "\0");
		return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
	}
	function waitFor(method, timeoutMs) {
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error("timed out waiting for " + method)), timeoutMs);
			listeners.push(function l(msg) {
				if (msg.method === method) {
					clearTimeout(timer);
					listeners = listeners.filter((x) => x !== l);
					resolve(msg.params);
				}
			});
		});
	}
	const errors = [];
	listeners.push((msg) => {
		if (msg.method === "Runtime.exceptionThrown")
			errors.push("exception: " + (msg.params.exceptionDetails.exception || {}).description || msg.params.exceptionDetails.text);
		if (msg.method === "Runtime.consoleAPICalled" && (msg.params.type === "error" || msg.params.type === "warning"))
			errors.push("console." + msg.params.type + ": " + msg.params.args.map((a) => a.value || a.description).join(" "));
		if (msg.method === "Log.entryAdded" && (msg.params.entry.level === "error" || msg.params.entry.level === "warning"))
			errors.push("log " + msg.params.entry.level + ": " + msg.params.entry.text + " " + (msg.params.entry.url || ""));
	});

	async function tab() {
		const { targetId } = await send("Target.createTarget", { url: "about:blank" });
		const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
		const cmd = (m, p) => send(m, p, sessionId);
		const value = async (expr) => {
			const r = await cmd("Runtime.evaluate", { expression: expr, returnByValue: true });
			if (r.exceptionDetails) throw new Error(expr + ": " + r.exceptionDetails.text);
			return r.result.value;
		};
		await cmd("Runtime.enable");
		await cmd("Log.enable");
		await cmd("Page.enable");
		return main({ cmd, value, errors, waitFor });
	}

	const timer = setTimeout(() => { console.error("timed out; chromium said:\n" + stderr); chromium.kill(); process.exit(2); }, timeoutMs);
	tab().then((out) => {
		console.log(JSON.stringify(out));
		clearTimeout(timer);
		send("Browser.close").catch(() => {});
		setTimeout(() => { chromium.kill(); fs.rmSync(profile, { recursive: true, force: true }); process.exit(0); }, 500);
	}, (err) => {
		console.error(String(err.stack || err) + "\nchromium said:\n" + stderr);
		chromium.kill();
		process.exit(1);
	});
}

module.exports = { run };
