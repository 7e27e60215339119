// daimyo web page: draws the board and panels from what the server sends, and sends clicks.
// Everything shown comes from the seat's own view; the page never decides legality, it only
// offers the options the server listed (an illegal click cannot be made).
"use strict";
const Daimyo = (() => {
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  let table = null, state = null, ws = null, fatal = false, seats = [];
  const colorOf = {}, nameOf = {};

  function el(tag, attrs, text) {
    const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const label = (k) => (table.display.names || {})[k] || k.replace(/_/g, " ");
  const item = (x) => (typeof x === "string" ? ((state && state.labels[x]) || nameOf[x] || x) : JSON.stringify(x));

  function empty(v) {
    return v === null || v === undefined || v === false || v === 0 || v === "" || v === "none" ||
      (Array.isArray(v) && v.length === 0) || (typeof v === "object" && !Array.isArray(v) && v && Object.keys(v).length === 0);
  }
  function fmt(k, v) {  // one field as a short line of text
    if (v === true) return label(k);
    if (v === "?") return `${label(k)}: hidden`;
    if (Array.isArray(v)) {
      if (v.length && v.every((x) => x === "?")) return `${label(k)}: ${v.length} hidden`;
      return `${label(k)}: ${v.map(item).join(", ")}`;
    }
    if (typeof v === "object") {
      if ("?" in v && Object.keys(v).length === 1) return `${label(k)}: hidden`;
      const parts = Object.entries(v).filter(([, n]) => !empty(n)).map(([a, n]) => (n === true ? item(a) : `${item(a)} ${typeof n === "object" ? JSON.stringify(n) : n}`));
      return parts.length ? `${label(k)}: ${parts.join(", ")}` : "";
    }
    return `${label(k)}: ${item(v)}`;
  }

  // ---------------------------------------------------------------- messages
  function showError(text) {
    const m = $("msg");
    m.textContent = text || "";
    m.classList.toggle("show", !!text);
  }
  function send(msg) {
    if (ws && ws.readyState === 1) { ws.send(JSON.stringify(msg)); showError(""); }
    else showError("not connected to the server: reconnecting...");
  }
  function connect() {
    const gid = location.pathname.split("/").pop();
    const token = location.hash.slice(1);
    ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/${gid}`);
    ws.onopen = () => { ws.send(JSON.stringify({ type: "hello", token })); $("conn").textContent = "connected"; };
    ws.onmessage = (ev) => {
      const msg = JSON.parse(ev.data);
      if (msg.type === "hello") { setTable(msg); seats = msg.seats; }
      else if (msg.type === "state") render(msg);
      else if (msg.type === "error") { showError(msg.message); if (msg.fatal) fatal = true; }
    };
    ws.onclose = () => {
      $("conn").textContent = fatal ? "" : "connection lost: reconnecting...";
      if (!fatal) setTimeout(connect, 1000);
    };
  }

  // ---------------------------------------------------------------- the table (static)
  function setTable(t) {
    table = t;
    $("title").textContent = `${t.title} (${Object.entries(t.options).map(([k, v]) => `${k} ${v}`).join(", ") || "no options"})`;
    document.title = t.title;
    for (const p of t.players) { colorOf[p.id] = p.color; nameOf[p.id] = `${p.name}`; }
    drawBoard();
  }
  function drawBoard() {
    const svg = $("board");
    svg.innerHTML = "";
    const b = table.board;
    if (!b) { $("boardwrap").hidden = true; return; }
    $("boardwrap").hidden = false;
    svg.setAttribute("viewBox", `0 0 ${b.width} ${b.height}`);
    const at = {};
    for (const s of b.spaces) at[s.id] = s;
    for (const [a, c, kind] of b.links) {
      svg.appendChild(el("svg:line", { class: `link ${kind === "land" ? "" : "dashed"}`, x1: at[a].x, y1: at[a].y, x2: at[c].x, y2: at[c].y }));
    }
    const [w, h] = b.box;
    for (const s of b.spaces) {
      const g = el("svg:g", { class: "space", "data-id": s.id, id: `space-${s.id}`, transform: `translate(${s.x - w / 2},${s.y - h / 2})` });
      g.appendChild(el("svg:rect", { class: "box", width: w, height: h, rx: 5, fill: s.color, "fill-opacity": 1 }));
      g.appendChild(el("svg:rect", { class: "owner", width: w, height: 6, rx: 2, fill: "transparent" }));
      g.appendChild(el("svg:text", { class: "name", x: 5, y: 19 }, s.id));
      for (let i = 0; i < 3; i++) g.appendChild(el("svg:text", { class: "line", x: 5, y: 33 + i * 12 }));
      g.appendChild(el("svg:title", {}, s.id));
      g.addEventListener("click", () => clickSpace(s.id));
      svg.appendChild(g);
    }
  }

  // ---------------------------------------------------------------- the game (live)
  let optionBySpace = {}, optionByCard = {};
  let clickedAt = null;  // when the person clicked: the page reports how long the board took
  function act(i) { clickedAt = performance.now(); send({ type: "act", n: state.decision.n, i }); }
  function clickSpace(id) { if (id in optionBySpace) act(optionBySpace[id]); }

  function render(msg) {
    state = msg;
    if (msg.table && !table) setTable(msg.table);
    if (!table) return;
    const view = msg.view, d = msg.decision;
    showError(msg.error || "");
    optionBySpace = {}; optionByCard = {};
    if (d) for (const o of d.options) { if (o.space) optionBySpace[o.space] = o.i; if (o.card) optionByCard[o.card] = o.i; }
    $("you").textContent = msg.you ? `you are ${nameOf[msg.you]} (${msg.you})` : (seats.length > 1 ? "hot-seat table" : "watching");
    $("turn").textContent = msg.over ? "the game is over" : (d ? "your turn" : (msg.waiting ? `waiting for ${nameOf[msg.waiting] || msg.waiting}` : ""));
    renderBoard(view);
    renderDecision(d);
    renderDraft(msg.draft);
    renderPlayers(view, msg);
    renderOwn(view, msg.you);
    renderZones(view);
    renderAccount(msg.account);
    renderOver(msg);
    // For tests and tools: what the page now shows, in one place.
    Object.assign(document.body.dataset, { seq: msg.seq, n: d ? d.n : "", over: msg.over ? "1" : "",
      draft: msg.draft ? `${msg.draft.choices.length}${msg.draft.review ? "r" : ""}` : "", handover: msg.handover || "",
      renders: String(Number(document.body.dataset.renders || 0) + 1) });
    if (clickedAt !== null) document.body.dataset.clickms = String(performance.now() - clickedAt);
    clickedAt = null;
    const ho = $("handover");
    if (msg.handover) {
      $("handtext").textContent = `Hand the screen to ${nameOf[msg.handover]} (${msg.handover}). Nothing secret is shown until they say so.`;
      $("handbtn").textContent = `I am ${nameOf[msg.handover]}: show my screen`;
      $("handbtn").onclick = () => { clickedAt = performance.now(); send({ type: "become", seat: msg.handover }); };
      ho.classList.add("show");
    } else ho.classList.remove("show");
  }

  function renderBoard(view) {
    const b = table.board;
    if (!b) return;
    const ownerField = table.display.owner, fields = table.display.fields;
    for (const s of b.spaces) {
      const g = document.getElementById(`space-${s.id}`);
      const ent = view.ent[s.id] || {};
      const owner = ent[ownerField];
      g.querySelector("rect.owner").setAttribute("fill", colorOf[owner] || "transparent");
      g.querySelector("rect.box").setAttribute("stroke", colorOf[owner] || "#333");
      // A hidden single value ("?") says nothing, not even its size: leave it off the board.
      const keys = (fields || Object.keys(ent)).filter((k) => k !== ownerField && !empty(ent[k]) && ent[k] !== "?");
      const lines = keys.map((k) => fmt(k, ent[k])).filter((x) => x);
      if (owner && colorOf[owner]) lines.unshift(nameOf[owner]);
      const texts = g.querySelectorAll("text.line");
      texts.forEach((t, i) => { t.textContent = i < 2 || lines.length <= 3 ? (lines[i] || "") : `+${lines.length - 2} more`; });
      g.querySelector("title").textContent = [s.id, ...lines].join("\n");
      g.classList.toggle("opt", s.id in optionBySpace);
    }
  }

  function renderDecision(d) {
    const box = $("options");
    box.innerHTML = "";
    const sec = $("decide");
    sec.hidden = !d;
    if (!d) return;
    box.appendChild(el("div", { class: "prompt" }, d.prompt));
    if (d.secret) box.appendChild(el("div", { class: "secret" }, "secret: your choices are gathered here and sent only when you confirm them"));
    if (d.number) {
      const vals = d.values, [lo, hi] = d.number;
      const contiguous = vals.length === hi - lo + 1;
      let input;
      if (contiguous) {
        input = el("input", { type: "range", min: lo, max: hi, step: 1, value: lo, id: "number" });
        const out = el("output", { id: "numberout" }, String(lo));
        input.oninput = () => { out.textContent = input.value; };
        box.append(input, out);
      } else {
        input = el("select", { id: "number" });
        for (const v of vals) input.appendChild(el("option", { value: v }, String(v)));
        box.appendChild(input);
      }
      const ok = el("button", { id: "numberok" }, "choose this number");
      ok.onclick = () => act(vals.indexOf(Number(input.value)));
      box.appendChild(ok);
      return;
    }
    for (const o of d.options) {
      const btn = el("button", { class: "option", "data-i": o.i, "data-value": o.space || o.card || "" }, o.text);
      btn.onclick = () => act(o.i);
      box.appendChild(btn);
    }
    if (Object.keys(optionBySpace).length) box.appendChild(el("div", { class: "muted" }, "or click a highlighted space on the board"));
  }

  function renderDraft(draft) {
    const sec = $("draft");
    sec.hidden = !draft;
    if (!draft) return;
    const ol = $("choices");
    ol.innerHTML = "";
    for (const c of draft.choices) ol.appendChild(el("li", {}, c));
    const btns = $("draftbtns");
    btns.innerHTML = "";
    if (draft.review) {
      const ok = el("button", { id: "confirm" }, "confirm and send");
      ok.onclick = () => { clickedAt = performance.now(); send({ type: "confirm" }); };
      btns.appendChild(ok);
    }
    const again = el("button", { id: "reset" }, "start over");
    again.onclick = () => send({ type: "reset" });
    btns.appendChild(again);
  }

  function renderPlayers(view, msg) {
    const box = $("players");
    box.innerHTML = "";
    const own = table.display.own || [];
    for (const p of table.players) {
      const ent = view.ent[p.id] || {};
      const keys = (table.display.counters || Object.keys(ent).filter((k) => !own.includes(k))).filter((k) => !empty(ent[k]) && ent[k] !== "?");
      const div = el("div", { class: `player${msg.waiting === p.id ? " deciding" : ""}`, id: `player-${p.id}` });
      div.style.borderLeftColor = p.color;
      div.appendChild(el("b", {}, `${p.name} (${p.id})`));
      div.appendChild(document.createTextNode(` ${p.kind === "human" ? "person" : p.kind}${msg.you === p.id ? ", you" : ""}`));
      if (msg.status[p.id]) div.appendChild(el("div", {}, msg.status[p.id]));
      div.appendChild(el("div", { class: "counters" }, keys.map((k) => fmt(k, ent[k])).filter((x) => x).join(" · ")));
      box.appendChild(div);
    }
  }

  function renderOwn(view, you) {
    const sec = $("ownsec"), box = $("own");
    sec.hidden = !you;
    box.innerHTML = "";
    if (!you) return;
    const ent = view.ent[you] || {};
    for (const k of table.display.own || []) {
      const v = ent[k];
      const row = el("div", {}, `${label(k)}: `);
      const items = Array.isArray(v) ? v : (v && typeof v === "object" ? Object.keys(v).filter((x) => !empty(v[x])) : null);
      if (items && items.length) {
        for (const x of items) {
          const text = Array.isArray(v) || v[x] === true ? item(x) : `${item(x)}: ${typeof v[x] === "object" ? JSON.stringify(v[x]) : v[x]}`;
          const c = el("span", { class: `card${x in optionByCard ? " opt" : ""}`, "data-id": x }, text);
          if (x in optionByCard) c.onclick = () => act(optionByCard[x]);
          row.appendChild(c);
        }
      } else row.appendChild(document.createTextNode(empty(v) ? "-" : fmt(k, v).replace(/^[^:]*: /, "")));
      box.appendChild(row);
    }
  }

  function renderZones(view) {
    const box = $("zones");
    box.innerHTML = "";
    const keys = table.display.zones || Object.keys(view.globals);
    for (const k of keys) {
      const v = view.globals[k];
      if (empty(v)) continue;
      box.appendChild(el("div", { "data-zone": k }, fmt(k, v)));
    }
  }

  function renderAccount(acc) {
    if (!acc) return;
    const box = $("account");
    if (acc.reset) box.textContent = "";
    if (!acc.lines.length) return;
    const stick = box.scrollTop + box.clientHeight >= box.scrollHeight - 20;
    box.appendChild(document.createTextNode(acc.lines.join("\n") + "\n"));
    if (stick || acc.reset) box.scrollTop = box.scrollHeight;
  }

  function renderOver(msg) {
    const sec = $("over");
    sec.hidden = !msg.over;
    if (!msg.over || !msg.result) return;
    const r = msg.result, t = el("table");
    (r.ranking || []).forEach((p, i) => {
      const tr = el("tr");
      tr.append(el("td", {}, `${i + 1}.`), el("td", {}, `${nameOf[p]} (${p})`), el("td", {}, String((r.scores || {})[p])),
        el("td", {}, (r.winners || []).includes(p) ? "winner" : ""), el("td", {}, msg.status[p] || ""));
      t.appendChild(tr);
    });
    $("result").innerHTML = "";
    $("result").appendChild(t);
  }

  return { connect, render, setTable, showError };
})();
