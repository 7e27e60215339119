// The lobby: pick a ruleset, its expansions and options, the seats; create; show the links.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const KINDS = ["human", "random", "heuristic", "search"];
  let packs = [];
  const showError = (t) => { $("msg").textContent = t || ""; $("msg").classList.toggle("show", !!t); };
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function chosen() {
    const base = $("base").value;
    const exps = [...document.querySelectorAll("#expansions input:checked")].map((i) => i.value);
    return [base, ...exps];
  }
  function refresh() {
    const base = packs.find((p) => p.id === $("base").value);
    const ex = $("expansions");
    ex.innerHTML = "";
    for (const p of packs.filter((q) => q.extends === base.id)) {
      const l = el("label"), c = el("input", { type: "checkbox", value: p.id, id: `exp-${p.id}` });
      c.onchange = refreshOptions;
      l.append(c, ` ${p.name}`);
      ex.appendChild(l);
    }
    refreshOptions();
  }
  function refreshOptions() {
    // The player counts the chosen packages allow: the base's, narrowed by each expansion.
    let [lo, hi] = [0, Infinity];
    for (const id of chosen()) {
      const p = packs.find((q) => q.id === id);
      lo = Math.max(lo, p.players[0]); hi = Math.min(hi, p.players[1]);
    }
    $("players").min = lo; $("players").max = hi;
    $("players").value = Math.min(Math.max(Number($("players").value), lo), hi);
    const box = $("options");
    box.innerHTML = "";
    for (const id of chosen()) {
      const p = packs.find((q) => q.id === id);
      for (const [name, o] of Object.entries(p.options)) {
        const s = el("select", { "data-option": name, id: `opt-${name}` });
        for (const v of o.values || []) s.appendChild(el("option", v === o.default ? { selected: "", value: JSON.stringify(v) } : { value: JSON.stringify(v) }, String(v)));
        const l = el("label", {}, `${name} `);
        l.appendChild(s);
        box.appendChild(l);
      }
    }
    refreshSeats();
  }
  function refreshSeats() {
    const box = $("seats");
    const old = [...box.querySelectorAll("select")].map((s) => s.value);
    box.innerHTML = "";
    for (let i = 0; i < Number($("players").value); i++) {
      const s = el("select", { id: `seat-${i + 1}` });
      for (const k of KINDS) s.appendChild(el("option", {}, k));
      s.value = old[i] || (i === 0 ? "human" : "heuristic");
      const l = el("label", {}, `P${i + 1} `);
      l.appendChild(s);
      box.appendChild(l);
    }
  }
  function showLinks(got) {
    const box = $("links");
    box.innerHTML = "";
    const what = { table: "hot-seat (all people at this screen)", watch: "spectator", admin: "admin (save and log downloads)" };
    for (const [role, href] of Object.entries(got.links)) {
      const url = location.origin + href;
      const row = el("div");
      row.append(`${what[role] || `seat ${role}`}: `, el("a", { href: url, target: "_blank", "data-role": role }, url));
      if (role === "admin") {
        const t = href.split("#")[1];
        row.append(" ", el("a", { href: `/api/games/${got.id}/save?t=${t}` }, "[save]"), " ",
          el("a", { href: `/api/games/${got.id}/log?t=${t}` }, "[log]"));
      }
      box.appendChild(row);
    }
    $("created").hidden = false;
  }
  async function post(url, body) {
    const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body });
    const got = await r.json();
    if (got.error) { showError(got.error); return; }
    showError("");
    showLinks(got);
  }
  $("create").onclick = () => {
    const options = {};
    for (const s of document.querySelectorAll("#options select")) options[s.dataset.option] = JSON.parse(s.value);
    const seats = [...document.querySelectorAll("#seats select")].map((s) => s.value);
    post("/api/games", JSON.stringify({ combo: chosen().join("+"), players: Number($("players").value), options, seats, seed: Number($("seed").value) }));
  };
  $("savefile").onchange = async () => { const f = $("savefile").files[0]; if (f) post("/api/games/import", await f.text()); };
  $("players").onchange = refreshSeats;
  $("base").onchange = refresh;
  fetch("/api/rulesets").then((r) => r.json()).then((got) => {
    packs = got;
    for (const p of packs.filter((q) => !q.extends)) $("base").appendChild(el("option", { value: p.id }, p.name));
    const preferred = packs.find((p) => p.default);  // the ruleset `daimyo play` starts without a COMBO
    if (preferred) $("base").value = preferred.id;
    refresh();
  });
})();
