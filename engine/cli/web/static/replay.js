// The replay viewer: open a log, step through it; each step is drawn like a spectator's page.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  let rid = null, total = 0, k = 0, tableSet = false;
  async function show(n) {
    if (!rid) return;
    const r = await fetch(`/api/replays/${rid}/${Math.max(0, Math.min(n, total))}`);
    const msg = await r.json();
    if (msg.error) { Daimyo.showError(msg.error); return; }
    if (!tableSet) { Daimyo.setTable(msg.table); tableSet = true; }
    k = msg.k;
    $("pos").textContent = `decision ${k} of ${total}`;
    $("jump").value = k;
    Daimyo.render(msg);
  }
  $("logfile").onchange = async () => {
    const f = $("logfile").files[0];
    if (!f) return;
    const r = await fetch("/api/replays", { method: "POST", body: await f.text() });
    const got = await r.json();
    if (got.error) { Daimyo.showError(got.error); return; }
    rid = got.id; total = got.decisions; tableSet = false;
    show(0);
  };
  $("first").onclick = () => show(0);
  $("prev").onclick = () => show(k - 1);
  $("next").onclick = () => show(k + 1);
  $("last").onclick = () => show(total);
  $("go").onclick = () => show(Number($("jump").value));
})();
