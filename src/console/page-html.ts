// The web console's page and style sheet, served as they are by
// src/console/http.ts. The page is an empty frame: app.js (src/console/page/)
// fills the navigation and the current view once it has loaded the browser
// client. No inline script, so a strict Content-Security-Policy holds.

export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sluice console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/style.css">
<script type="module" src="/console/app.js"></script>
</head>
<body>
<header>
  <h1>Sluice</h1>
  <nav id="nav"></nav>
  <span id="status">connecting…</span>
  <span id="whoami"></span>
</header>
<div id="login"></div>
<div id="errors"></div>
<main id="main"></main>
</body>
</html>
`;

export const CONSOLE_CSS = `
:root { --fg: #111827; --muted: #6b7280; --line: #e5e7eb; --accent: #2563eb; --warn: #b45309; --bad: #b91c1c; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, sans-serif; color: var(--fg); background: #fff; }
header { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); background: #f9fafb; }
header h1 { font-size: 1.1rem; margin: 0; }
nav a { margin-right: 1rem; color: var(--muted); text-decoration: none; }
nav a.active { color: var(--accent); font-weight: 600; }
#status { margin-left: auto; color: var(--muted); font-size: .85rem; }
#errors p { margin: 0; padding: .4rem 1.2rem; background: #fef2f2; color: var(--bad); }
main { padding: 0 1.2rem 2rem; }
h2 { font-size: 1.2rem; margin: 1rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
table { border-collapse: collapse; margin: .3rem 0 1rem; }
th, td { text-align: left; padding: .25rem .8rem .25rem 0; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 500; }
tr.empty td { color: var(--muted); }
tr.under-replicated td, tr.lagging td, tr.warn td { background: #fffbeb; }
tr.offline td { background: #fef2f2; }
.flag { font-size: .8rem; padding: 0 .35rem; border-radius: .25rem; }
.flag.under-replicated { background: #fde68a; color: #78350f; }
.flag.offline { background: #fecaca; color: #7f1d1d; }
dl.summary { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; }
dl.summary dt { color: var(--muted); }
dl.summary dd { margin: 0; font-weight: 600; }
.muted { color: var(--muted); }
.refused { padding: .6rem .8rem; background: #f3f4f6; border-left: 3px solid var(--muted); }
.state-stable { color: #15803d; }
.state-empty, .state-dead { color: var(--muted); }
.state-preparingrebalance, .state-completingrebalance { color: var(--warn); }
article.group { border-top: 1px solid var(--line); padding-top: .3rem; }
button.admin { font: inherit; padding: .15rem .6rem; border: 1px solid var(--accent); background: #eff6ff; color: var(--accent); border-radius: .25rem; cursor: pointer; }
#login form { display: grid; grid-template-columns: 20rem; gap: .4rem; padding: 1rem 1.2rem; border-bottom: 1px solid var(--line); }
#login label { display: grid; gap: .1rem; color: var(--muted); }
#login p.error { color: var(--bad); min-height: 1.2em; margin: 0; }
form#produce-form { display: grid; grid-template-columns: 28rem; gap: .5rem; }
form#produce-form label { display: grid; gap: .15rem; color: var(--muted); }
form#produce-form input, form#produce-form select, form#produce-form textarea { font: inherit; padding: .25rem; }
.action-status { min-height: 1.2em; color: var(--accent); }
#tail td.value, #tail td.key { font-family: ui-monospace, monospace; max-width: 40rem; overflow-wrap: anywhere; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5rem; }
figure.chart { margin: 0; }
figure.chart figcaption { color: var(--muted); margin-bottom: .2rem; }
figure.chart .grid { stroke: var(--line); }
figure.chart .axis { fill: var(--muted); font-size: 11px; }
ul.legend { list-style: none; padding: 0; margin: .2rem 0; display: flex; flex-wrap: wrap; gap: .2rem 1rem; }
.swatch { display: inline-block; width: .8rem; height: .8rem; margin-right: .3rem; vertical-align: -1px; border-radius: 2px; }
`;
