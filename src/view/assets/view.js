'use strict';
// mcptape view: builds the page from the JSON data block. Every string from the tape is
// inserted with textContent or drawn with fillText; nothing is ever parsed as HTML.
(function () {
  const D = JSON.parse(document.getElementById('tape-data').textContent);
  const E = D.entries, X = D.exchanges, C = D.connections;
  // Entry fields.
  const LINE = 0, DIR = 1, CONN = 2, T = 3, EX = 4, KIND = 5, LABEL = 6, RAW = 7, SEV = 8;
  // Exchange fields.
  const XC = 0, XREQ = 1, XANS = 2, XT0 = 3, XT1 = 4, XST = 5, XFROM = 6, XM = 7, XTOOL = 8;
  const ROW = 22, LABEL_W = 220;
  const COLORS = { ok: '#2e8b57', error: '#d03030', 'tool-error': '#e08a00', fault: '#8b1a8b',
    policy: '#1f6fd0', unanswered: '#888888', diverged: '#ff2d95' };
  const SEVC = { ok: '#2e8b57', info: '#777777', warn: '#1f6fd0', bad: '#d03030' };
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = String(text);
    return n;
  };

  // The receipt, by tape line.
  const R = D.receipt;
  const diverged = new Set(R ? R.diverged : []);
  const byLine = new Map();
  if (R && R.kind === 'verify') {
    for (const c of R.calls) byLine.set(c.line, { verify: c });
  } else if (R && R.kind === 'replay') {
    for (const v of R.verdicts) {
      if (v.mismatch && v.mismatch.line != null) byLine.set(v.mismatch.line, { mismatch: v.mismatch, verdict: v });
      for (const l of v.leftovers) byLine.set(l.line, { leftover: l, verdict: v });
    }
  }
  const lineIndex = new Map();
  E.forEach((e, i) => lineIndex.set(e[LINE], i));
  const status = (x) => (diverged.has(E[X[x][XREQ]][LINE]) ? 'diverged' : X[x][XST]);
  // A time for people: 420 ms, 12.3 s, 4 min 5 s, 3 h 23 min, 2 d 5 h.
  const fmtMs = (ms) => {
    if (ms == null) return '';
    const sign = ms < 0 ? '−' : '', a = Math.abs(ms);
    const s = Math.floor(a / 1000), m = Math.floor(s / 60), h = Math.floor(m / 60), d = Math.floor(h / 24);
    return sign + (a < 1000 ? a + ' ms' : a < 60000 ? (a / 1000).toFixed(a < 10000 ? 2 : 1) + ' s'
      : m < 60 ? m + ' min ' + (s % 60) + ' s' : h < 24 ? h + ' h ' + (m % 60) + ' min' : d + ' d ' + (h % 24) + ' h');
  };
  // Control, bidi and invisible characters as `\u` escapes (JSON reads them back the
  // same), so that a message cannot reorder or hide what is around it; the raw line is
  // the tape's. (Labels and names come escaped from mcptape already.)
  const HIDDEN = /[\u007f-\u009f\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;
  const vis = (text) => String(text).replace(HIDDEN, (c) => Array.from({ length: c.length }, (_, k) =>
    '\\u' + c.charCodeAt(k).toString(16).padStart(4, '0')).join(''));
  const arrow = (d) => (d === 's' ? '→' : d === 'r' ? '←' : '·');
  const connName = (c) => (c < 0 ? '' : C[c].server + ' · ' + C[c].id);

  // Header, legend, receipt summary.
  const base = String(D.tape).split('/').pop();
  $('title').textContent = base;
  document.title = base + ' · mcptape view';
  $('summary').textContent = C.length + ' connection' + (C.length === 1 ? '' : 's') + ' · ' +
    E.length + ' entr' + (E.length === 1 ? 'y' : 'ies') + ' · ' + X.length + ' request' +
    (X.length === 1 ? '' : 's') + (D.warnings.length ? ' · ' + D.warnings.join('; ') : '');
  for (const k of Object.keys(COLORS)) {
    if (k === 'diverged' && !R) continue;
    const s = el('span');
    const sw = el('span', 'sw');
    sw.style.background = COLORS[k];
    s.append(sw, document.createTextNode(k));
    $('legend').append(s);
  }
  if (R) {
    const box = $('receipt');
    box.hidden = false;
    if (R.kind === 'verify') {
      const counts = {};
      for (const c of R.calls) counts[c.class] = (counts[c.class] || 0) + 1;
      box.textContent = 'verify receipt (server ' + vis(R.server) + '): ' +
        Object.entries(counts).map(([k, n]) => n + ' ' + k).join(', ');
    } else {
      box.textContent = vis('replay receipt: ' + R.verdicts.map((v) =>
        v.label + ' ' + v.server + (v.conn ? ' · ' + v.conn : '') +
        (v.problems.length ? ' (' + v.problems.join('; ') + ')' : '')).join('\n'));
    }
  }

  // Search keys, built on first use.
  let keys = null;
  const keyOf = (i) => {
    const e = E[i];
    let m = '', t = '';
    if (e[EX] >= 0) { m = X[e[EX]][XM]; t = X[e[EX]][XTOOL] || ''; }
    else if (e[KIND] !== 'l' && e[KIND] !== 'N') {
      const mm = /"method"\s*:\s*"([^"]*)"/.exec(e[RAW]);
      if (mm) m = mm[1];
    }
    return [m.toLowerCase(), t.toLowerCase(), (e[LABEL] + '\n' + e[RAW]).toLowerCase()];
  };
  const match = (i, terms) => {
    const k = keys[i] || (keys[i] = keyOf(i));
    for (const [f, v] of terms) {
      if (f === 'method' ? !k[0].includes(v) : f === 'tool' ? !k[1].includes(v) : !k[2].includes(v)) return false;
    }
    return true;
  };

  // The list: rows are entry indexes; only the visible ones are in the DOM.
  const list = $('list'), spacer = $('spacer');
  let rows = E.map((_, i) => i);
  let cur = -1, sel = -1;
  const filter = (q) => {
    q = q.trim().toLowerCase();
    if (!q) { rows = E.map((_, i) => i); }
    else {
      if (!keys) keys = new Array(E.length);
      const terms = q.split(/\s+/).map((w) => {
        const m = /^(method|tool):(.*)$/.exec(w);
        return m ? [m[1], m[2]] : ['', w];
      });
      rows = [];
      for (let i = 0; i < E.length; i++) if (E[i][KIND] === 'N' || match(i, terms)) rows.push(i);
    }
    $('count').textContent = rows.length === E.length ? '' : rows.length + ' of ' + E.length;
    cur = sel >= 0 ? rows.indexOf(sel) : -1;
    spacer.style.height = rows.length * ROW + 'px';
    list.scrollTop = 0;
    paint();
  };
  const rowFor = (pos) => {
    const i = rows[pos], e = E[i];
    const r = el('div', 'row ' + e[DIR]);
    r.dataset.i = i;
    r.dataset.line = e[LINE];
    r.setAttribute('role', 'option');
    r.style.top = pos * ROW + 'px';
    if (e[KIND] === 'N') {
      r.classList.add('note');
      r.append(el('span', 'ln', e[LINE]), el('span', 'at', fmtMs(e[T])), el('span', null, '✎ ' + e[LABEL]));
      return r;
    }
    r.append(el('span', 'ln', e[LINE]), el('span', 'at', fmtMs(e[T])), el('span', 'ar', arrow(e[DIR])),
      el('span', 'cn', connName(e[CONN])));
    r.append(el('span', e[SEV] ? 'sev-' + e[SEV] : null, e[LABEL]));
    if (e[KIND] === 'a') r.append(el('span', 'cn', X[e[EX]][XM] + (X[e[EX]][XTOOL] ? ' ' + X[e[EX]][XTOOL] : '')));
    if (e[EX] >= 0 && e[KIND] === 'q') {
      const s = status(e[EX]);
      r.append(el('span', 'st ' + s, s));
      if (s === 'diverged') r.classList.add('diverged');
      const d = X[e[EX]][XT1] != null && X[e[EX]][XT0] != null ? X[e[EX]][XT1] - X[e[EX]][XT0] : null;
      if (d != null) r.append(el('span', 'cn', fmtMs(d)));
    }
    const info = byLine.get(e[LINE]);
    if (info && info.verify) {
      r.append(el('span', 'st ' + (diverged.has(e[LINE]) ? 'diverged' : 'unanswered'), info.verify.class));
      if (info.verify.class === 'skipped' || info.verify.class === 'not-played') r.classList.add('skipped');
    } else if (info && (info.mismatch || info.leftover)) {
      r.classList.add('diverged');
      r.append(el('span', 'st diverged', info.mismatch ? 'mismatch' : 'leftover'));
    }
    if (pos === cur) r.classList.add('cur');
    if (i === sel) r.classList.add('sel');
    r.setAttribute('aria-selected', i === sel ? 'true' : 'false');
    return r;
  };
  let painted = [-1, -1];
  const paint = (force) => {
    const first = Math.max(0, Math.floor(list.scrollTop / ROW) - 5);
    const last = Math.min(rows.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + 5);
    if (force === false && painted[0] === first && painted[1] === last) return;
    painted = [first, last];
    const frag = document.createDocumentFragment();
    for (let p = first; p < last; p++) frag.append(rowFor(p));
    spacer.replaceChildren(frag);
  };
  list.addEventListener('scroll', () => paint(false));
  window.addEventListener('resize', () => { paint(true); draw(); });
  list.addEventListener('click', (ev) => {
    const r = ev.target.closest('.row');
    if (r) open(Number(r.dataset.i));
  });

  const reveal = (pos) => {
    const top = pos * ROW;
    if (top < list.scrollTop) list.scrollTop = top;
    else if (top + ROW > list.scrollTop + list.clientHeight) list.scrollTop = top + ROW - list.clientHeight;
  };
  const move = (d) => {
    if (!rows.length) return;
    cur = Math.max(0, Math.min(rows.length - 1, (cur < 0 ? (d > 0 ? -1 : rows.length) : cur) + d));
    reveal(cur);
    paint(true);
  };

  // The detail pane.
  const pretty = (raw) => {
    try {
      const v = JSON.parse(raw);
      if (v && typeof v === 'object' && !Array.isArray(v)) delete v._meta;
      return vis(JSON.stringify(v, null, 2));
    } catch (_) { return vis(raw); }
  };
  const jump = (i, text) => {
    const b = el('button', 'jump', text);
    b.addEventListener('click', () => open(i, true));
    return b;
  };
  function open(i, scroll) {
    sel = i;
    let pos = rows.indexOf(i);
    if (pos < 0 && scroll) { $('search').value = ''; filter(''); pos = rows.indexOf(i); }
    cur = pos;
    if (scroll && pos >= 0) reveal(pos);
    paint(true);
    draw();
    const e = E[i], d = $('detail');
    d.replaceChildren();
    d.append(el('h2', null, (e[KIND] === 'N' ? 'note: ' : arrow(e[DIR]) + ' ') + e[LABEL]));
    const dl = el('dl');
    const row = (k, v) => { if (v !== '' && v != null) dl.append(el('dt', null, k), el('dd', null, v)); };
    let ts = '';
    try { const m = JSON.parse(e[RAW])._meta; ts = m && m.ts; } catch (_) { /* shown raw */ }
    row('tape line', e[LINE]);
    row('direction', { s: 'client → server', r: 'server → client', l: 'lifecycle' }[e[DIR]]);
    row('connection', connName(e[CONN]));
    row('time', ts);
    const pair = [];
    if (e[EX] >= 0) {
      const x = X[e[EX]];
      row('method', x[XM] + (x[XTOOL] ? ' · ' + x[XTOOL] : ''));
      row('asked by', x[XFROM] === 's' ? 'the client' : 'the server');
      row('status', status(e[EX]));
      if (x[XT0] != null && x[XT1] != null) row('duration', fmtMs(x[XT1] - x[XT0]));
      if (e[KIND] === 'q' && x[XANS] >= 0) pair.push(jump(x[XANS], 'answer at line ' + E[x[XANS]][LINE] + ' →'));
      if (e[KIND] === 'a') pair.push(jump(x[XREQ], '← request at line ' + E[x[XREQ]][LINE]));
      if (e[KIND] === 'q' && x[XANS] < 0) row('answer', 'none on the tape');
    }
    d.append(dl, ...pair);
    const info = byLine.get(e[LINE]) || (e[EX] >= 0 ? byLine.get(E[X[e[EX]][XREQ]][LINE]) : null);
    if (info && info.verify) {
      const c = info.verify;
      d.append(el('h2', null, 'verify: ' + c.class));
      if (c.reason) d.append(el('p', null, c.reason));
      if (c.differences && c.differences.length) {
        const ul = el('ul', 'diffs');
        for (const df of c.differences) {
          const li = el('li');
          li.append(el('span', 'path', vis(df.path)), document.createTextNode(
            ': ' + vis(JSON.stringify(df.old)) + ' → ' + vis(JSON.stringify(df.new))));
          ul.append(li);
        }
        d.append(ul);
      }
    } else if (info && info.mismatch) {
      d.append(el('h2', null, 'replay: mismatch'), el('p', null, 'expected ' + info.mismatch.expected + ', got ' + info.mismatch.got),
        el('pre', 'diff', info.mismatch.diff));
    } else if (info && info.leftover) {
      d.append(el('h2', null, 'replay: leftover'), el('p', null, 'never sent by the client: ' + info.leftover.summary));
    }
    const pre = el('pre', 'message', pretty(e[RAW]));
    const raw = el('pre', 'raw', e[RAW]);
    raw.hidden = true;
    const toggle = el('button', 'toggle', 'raw line');
    toggle.addEventListener('click', () => {
      raw.hidden = !raw.hidden; pre.hidden = !raw.hidden;
      toggle.textContent = raw.hidden ? 'raw line' : 'pretty';
    });
    d.append(toggle, pre, raw);
  }

  // The timeline: a lane (a canvas) per connection on one time axis, spanning the
  // traffic; a note outside it (added hours later) is pinned at its edge.
  const times = [];
  for (const e of E) if (e[T] != null && e[KIND] !== 'N') times.push(e[T]);
  if (!times.length) for (const e of E) if (e[T] != null) times.push(e[T]);
  let t0 = 0, t1 = 1;
  if (times.length) { t0 = times.reduce((a, b) => (b < a ? b : a)); t1 = times.reduce((a, b) => (b > a ? b : a)); }
  if (t1 <= t0) t1 = t0 + 1;
  const lanes = $('lanes'), hits = [];
  const canvases = C.map((c, k) => {
    const lane = el('div', 'lane');
    lane.dataset.conn = k;
    const label = el('div', 'lane-label', c.server + ' · ' + c.id);
    label.title = c.server + ' · ' + c.id;
    const cv = el('canvas');
    cv.addEventListener('click', (ev) => {
      const r = cv.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      let best = -1, dist = 6;
      for (const h of hits[k] || []) {
        const dx = x < h[0] ? h[0] - x : x > h[1] ? x - h[1] : 0;
        const dy = y < h[2] ? h[2] - y : y > h[3] ? y - h[3] : 0;
        if (dx + dy < dist) { dist = dx + dy; best = h[4]; }
      }
      if (best >= 0) open(best, true);
    });
    lane.append(label, cv);
    lanes.append(lane);
    return cv;
  });
  const byConn = C.map(() => []), marksOf = C.map(() => []);
  X.forEach((x, k) => byConn[x[XC]].push(k));
  E.forEach((e, i) => { if (e[CONN] >= 0 && e[EX] < 0) marksOf[e[CONN]].push(i); });
  const pos = (t, w) => ((t - t0) / (t1 - t0)) * (w - 8) + 4;
  const notePos = (t, w) => Math.max(4, Math.min(w - 4, pos(t, w)));
  function draw() {
    const ratio = window.devicePixelRatio || 1;
    canvases.forEach((cv, k) => {
      const w = cv.clientWidth, h = cv.clientHeight;
      if (!w) return;
      cv.width = w * ratio; cv.height = h * ratio;
      const g = cv.getContext('2d');
      g.scale(ratio, ratio);
      g.clearRect(0, 0, w, h);
      const hit = (hits[k] = []);
      for (const n of D.notes) {
        if (E[n][T] == null) continue;
        const x = notePos(E[n][T], w);
        g.strokeStyle = '#c08000'; g.setLineDash([3, 3]);
        g.beginPath(); g.moveTo(x, 0); g.lineTo(x, h); g.stroke(); g.setLineDash([]);
      }
      // Requests: bars, packed into three rows.
      const ends = [-1, -1, -1];
      for (const x of byConn[k]) {
        const ex = X[x];
        if (ex[XT0] == null) continue;
        const a = pos(ex[XT0], w), b = Math.max(a + 3, pos(ex[XT1] != null ? ex[XT1] : ex[XT0], w));
        let r = ends.findIndex((e) => e < a);
        if (r < 0) r = 0;
        ends[r] = b;
        const y = 2 + r * 8;
        g.fillStyle = COLORS[status(x)] || '#888';
        g.fillRect(a, y, b - a, 6);
        if (ex[XFROM] === 'r') { g.fillStyle = '#6a3fb5'; g.fillRect(a, y - 1, 2, 8); }
        if (sel === ex[XREQ] || sel === ex[XANS]) { g.strokeStyle = '#000'; g.strokeRect(a - 1, y - 1, b - a + 2, 8); }
        hit.push([a, b, y, y + 6, ex[XREQ]]);
      }
      // Notifications as ticks, lifecycle events as markers.
      for (const i of marksOf[k]) {
        const e = E[i];
        if (e[T] == null) continue;
        const x = pos(e[T], w);
        if (e[DIR] === 'l') {
          g.fillStyle = SEVC[e[SEV]] || '#777';
          g.fillRect(x - 1, 0, 2, h);
          hit.push([x - 2, x + 2, 0, h, i]);
        } else {
          g.fillStyle = '#999';
          g.fillRect(x - 0.5, h - 8, 1.5, 7);
          hit.push([x - 2, x + 2, h - 8, h, i]);
        }
        if (sel === i) { g.strokeStyle = '#000'; g.strokeRect(x - 3, 0, 6, h); }
      }
    });
    // The axis and the notes' flags.
    const w = canvases.length ? canvases[0].clientWidth : $('axis').clientWidth;
    const axis = $('axis');
    axis.replaceChildren();
    for (let s = 0; s <= 4; s++) {
      const t = t0 + ((t1 - t0) * s) / 4;
      const tick = el('span', 'tick', '+' + fmtMs(Math.round(t - t0)));
      tick.style.left = Math.min(pos(t, w), w - 60) + 'px';
      axis.append(tick);
    }
    const row = $('noterow');
    row.replaceChildren();
    for (const n of D.notes) {
      const f = el('span', 'flag', E[n][LABEL]);
      f.title = E[n][LABEL];
      f.dataset.i = n;
      const x = E[n][T] == null ? 0 : notePos(E[n][T], w);
      // Near the right edge the flag hangs to the left of its rule.
      if (x > w - 120) { f.classList.add('end'); f.style.right = (w - x) + 'px'; }
      else f.style.left = x + 'px';
      if (E[n][T] != null && (E[n][T] < t0 || E[n][T] > t1)) f.title += ' (at ' + (E[n][T] < t0 ? '' : '+') + fmtMs(E[n][T] - t0) + ', outside the traffic)';
      f.addEventListener('click', () => open(n, true));
      row.append(f);
    }
    row.hidden = D.notes.length === 0;
  }

  // Keys.
  const search = $('search');
  let pending = 0;
  search.addEventListener('input', () => {
    clearTimeout(pending);
    pending = setTimeout(() => filter(search.value), E.length > 20000 ? 200 : 0);
  });
  document.addEventListener('keydown', (ev) => {
    if (ev.target === search) {
      if (ev.key === 'Escape') { search.value = ''; filter(''); search.blur(); list.focus(); }
      else if (ev.key === 'Enter' || ev.key === 'ArrowDown') { clearTimeout(pending); filter(search.value); search.blur(); list.focus(); move(1); ev.preventDefault(); }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key === 'j' || ev.key === 'ArrowDown') { move(1); ev.preventDefault(); }
    else if (ev.key === 'k' || ev.key === 'ArrowUp') { move(-1); ev.preventDefault(); }
    else if (ev.key === 'Enter' && cur >= 0) { open(rows[cur], true); ev.preventDefault(); }
    else if (ev.key === '/') { search.focus(); search.select(); ev.preventDefault(); }
    else if (ev.key === 'Escape') { search.value = ''; filter(''); }
  });

  filter('');
  draw();
  list.focus();
  document.body.dataset.ready = String(performance.now());
})();
