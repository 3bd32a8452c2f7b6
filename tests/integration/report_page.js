// report_page.js - drives Debian's headless Chromium (chromium.js: the DevTools protocol on a pipe, nothing
// but node itself) through the page `locktime report` writes, as a person would: load it, read the
// table, click a column head (twice), type into the filter, click a row; collects console errors and
// uncaught exceptions, and takes a screenshot.
//   node report_page.js PAGE.html SCREENSHOT.png COLUMN-KEY FILTER-TEXT
// Prints one JSON object: {errors, rows, sorted, sorted_again, filtered, detail, layout, timeline} (detail: also the
// selected site's call stacks (summary, open, frames, frames shown), the blame, cycles and deadlocks sections, the first section shown and the header's cards; layout, at
// 1280 px, for the first site and the last: how far the table overflows its box sideways and which
// texts of the charts overlap; timeline, when the page has one: per process its lanes, bars and arrows (from and
// to which lane), the widest hold's width before and after a click on "Zoom in" and after "Reset", and a screenshot
// of the section beside SCREENSHOT, as NAME-timeline.png).
"use strict";
const fs = require("fs");
const path = require("path");
const { run } = require("./chromium.js");

const [page, shot, column, filterText] = process.argv.slice(2);

async function main({ cmd, value, errors, waitFor }) {
	// A real click: mouse down and up at the middle of the element `selector` matches.
	const click = async (selector) => {
		const box = await value(`(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();
			return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`);
		for (const type of ["mousePressed", "mouseReleased"])
			await cmd("Input.dispatchMouseEvent", { type, x: box.x, y: box.y, button: "left", clickCount: 1 });
	};
	const rows = () => value(`Array.from(document.querySelectorAll("#sites tbody tr")).map((tr) =>
		Array.from(tr.cells).map((td) => td.textContent))`);
	const heads = () => value(`Array.from(document.querySelectorAll("#sites thead th")).map((th) =>
		({ key: th.dataset.key, text: th.textContent, sort: th.getAttribute("aria-sort") }))`);
	// The page's own layout: the table's sideways overflow (px) and every pair of chart texts whose boxes meet.
	const layout = () => value(`(() => {
		const box = document.querySelector("#sites").parentElement;
		const overlaps = [];
		document.querySelectorAll("#detail svg").forEach((svg) => {
			const t = Array.from(svg.querySelectorAll("text")).map((e) => ({ text: e.textContent, r: e.getBoundingClientRect() }));
			for (let i = 0; i < t.length; i++)
				for (let j = i + 1; j < t.length; j++) {
					const a = t[i].r, b = t[j].r;
					if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
						overlaps.push(t[i].text + " / " + t[j].text);
				}
		});
		return { overflow: box.scrollWidth - box.clientWidth, overlaps,
			notes: Array.from(document.querySelectorAll("#detail .chart > div.sub")).map((d) => d.textContent) };
	})()`);

	await cmd("Emulation.setDeviceMetricsOverride", { width: 1280, height: 1000, deviceScaleFactor: 1, mobile: false });
	const loaded = waitFor("Page.loadEventFired", 20000);
	await cmd("Page.navigate", { url: "file://" + path.resolve(page) });
	await loaded;
	const out = { heads: await heads(), rows: await rows(), layout: [await layout()] };
	await click(`#sites thead th[data-key="${column}"]`);
	out.sorted = { heads: await heads(), rows: await rows() };
	await click(`#sites thead th[data-key="${column}"]`);
	out.sorted_again = { heads: await heads(), rows: await rows() };
	await click("#filter");
	await cmd("Input.insertText", { text: filterText });
	out.filtered = { rows: await rows(), count: await value(`document.getElementById("count").textContent`) };
	await click("#filter");
	await value(`(() => { const f = document.getElementById("filter"); f.value = ""; f.dispatchEvent(new Event("input")); })()`);
	// select the last row (the first is selected on load)
	await click("#sites tbody tr:last-child");
	out.detail = await value(`({ method: document.querySelector("#detail code").textContent,
		selected: document.querySelector("#sites tbody tr.sel").cells[0].textContent,
		charts: Array.from(document.querySelectorAll("#detail .chart")).map((c) => ({
			title: c.querySelector("h3").firstChild.textContent.trim(), bars: c.querySelectorAll("svg rect").length })),
		blame: document.getElementById("blame").hidden ? null : document.getElementById("blame").textContent,
		cycles: document.getElementById("cycles").hidden ? null : document.getElementById("cycles").textContent,
		deadlocks: document.getElementById("deadlocks").hidden ? null : Array.from(document.querySelectorAll("#deadlocks li")).map((li) =>
			Array.from(li.children).map((div) => div.textContent)),
		deadlocks_text: document.getElementById("deadlocks").hidden ? null : document.getElementById("deadlocks").textContent,
		now: document.getElementById("now").hidden ? null : Array.from(document.querySelectorAll("#now li")).map((li) => li.textContent),
		stacks: Array.from(document.querySelectorAll("#detail details.stack")).map((d) => ({ summary: d.querySelector("summary").textContent,
			open: d.open, frames: Array.from(d.querySelectorAll("ol.frames li")).map((li) => li.textContent),
			visible: Array.from(d.querySelectorAll("ol.frames li")).filter((li) => li.checkVisibility()).length })),
		first_section: document.querySelector("main > section:not([hidden])").id,
		cards: Array.from(document.querySelectorAll("#cards .card")).map((c) => ({ text: c.textContent, alarm: c.classList.contains("alarm") })),
		scripts: document.scripts.length, images: document.images.length })`);
	out.layout.push(await layout());
	// the timeline: what each process's view shows, and its zoom
	const timeline = () => value(`document.getElementById("timeline").hidden ? null :
		Array.from(document.querySelectorAll("#timeline .tl")).map((tl) => {
			const lanes = Array.from(tl.querySelectorAll("text.lane")).map((t) => t.textContent);
			const laneOf = (thread) => { const r = tl.querySelector('rect[data-thread="' + thread + '"]'); return r ? r.getAttribute("y") : null; };
			return { title: tl.querySelector("h3").textContent, lanes,
				waits: tl.querySelectorAll("rect.wait").length, holds: tl.querySelectorAll("rect.hold").length,
				widest_hold: Math.max(0, ...Array.from(tl.querySelectorAll("rect.hold")).map((r) => +r.getAttribute("width"))),
				arrows: Array.from(tl.querySelectorAll("path.link")).map((a) => ({ from: a.dataset.from, to: a.dataset.to,
					titles: [a.dataset.from, a.dataset.to].map((t) => tl.querySelector('rect[data-thread="' + t + '"] title').textContent) })),
				shown: tl.querySelector(".tl-bar .sub").textContent };
		})`);
	out.timeline = await timeline();
	if (out.timeline) {
		await click("#timeline .tl-bar button:first-child");
		out.timeline_zoomed = await timeline();
		await click("#timeline .tl-bar button:nth-child(3)");
		out.timeline_reset = await timeline();
		const r = await value(`(() => { const r = document.getElementById("timeline").getBoundingClientRect();
			return { x: r.x + window.scrollX, y: r.y + window.scrollY, width: r.width, height: r.height }; })()`);
		const tl = await cmd("Page.captureScreenshot", { format: "png", captureBeyondViewport: true, clip: { ...r, scale: 1 } });
		fs.writeFileSync(shot.replace(/\.png$/, "") + "-timeline.png", Buffer.from(tl.data, "base64"));
	}
	// the screenshot: the whole page as it opens (costliest site first, and selected)
	const reloaded = waitFor("Page.loadEventFired", 20000);
	await cmd("Page.reload");
	await reloaded;
	const metrics = await cmd("Page.getLayoutMetrics");
	const size = metrics.cssContentSize || metrics.contentSize;
	const png = await cmd("Page.captureScreenshot", { format: "png", captureBeyondViewport: true,
		clip: { x: 0, y: 0, width: size.width, height: Math.min(size.height, 4000), scale: 1 } });
	fs.writeFileSync(shot, Buffer.from(png.data, "base64"));
	out.errors = errors;
	return out;
}

run(main, 60000);
