// Polls /api/stats once a second and draws ingress per worker, drops by
// reason and each transport's detector state. No libraries: canvas only.
const HISTORY = 120;
const COLORS = ['#6cc4ff', '#ff6b5e', '#ffd166', '#6fd28a', '#c792ea', '#f78c6c', '#89ddff', '#ff9cac', '#addb67', '#7fdbca', '#e2b93d'];
const state = { last: null, ingress: {}, drops: {}, history: {}, reasons: [] };
window.moatDashboard = state;

function push(series, key, value) {
  (series[key] = series[key] || []).push(value);
  if (series[key].length > HISTORY) series[key].shift();
}

function draw(canvas, series) {
  const ctx = canvas.getContext('2d');
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = '#0c1117';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const keys = Object.keys(series);
  let max = 10;
  keys.forEach((k) => series[k].forEach((v) => { if (v > max) max = v; }));
  ctx.fillStyle = '#8a98a8';
  ctx.font = '11px sans-serif';
  ctx.fillText(Math.round(max) + '/s', 4, 12);
  keys.forEach((k, i) => {
    ctx.strokeStyle = COLORS[i % COLORS.length];
    ctx.beginPath();
    series[k].forEach((v, x) => {
      const px = (x / (HISTORY - 1)) * canvas.width;
      const py = canvas.height - (v / max) * (canvas.height - 16);
      if (x === 0) ctx.moveTo(px, py); else ctx.lineTo(px, py);
    });
    ctx.stroke();
  });
}

function legend(keys) {
  const el = document.getElementById('legend');
  el.innerHTML = '';
  keys.forEach((k, i) => {
    const span = document.createElement('span');
    span.innerHTML = '<i></i>';
    span.firstChild.style.background = COLORS[i % COLORS.length];
    span.appendChild(document.createTextNode(k));
    el.appendChild(span);
  });
}

function historyCanvas(id) {
  const c = document.createElement('canvas');
  c.width = 160; c.height = 14; c.className = 'history';
  const ctx = c.getContext('2d');
  (state.history[id] || []).forEach((on, x) => {
    ctx.fillStyle = on ? '#ff6b5e' : '#2e6b44';
    ctx.fillRect(x * (160 / HISTORY), 0, 160 / HISTORY + 0.5, 14);
  });
  return c;
}

function render(stats) {
  const previous = state.last;
  const dt = previous ? Math.max(0.1, stats.time - previous.time) : 1;
  stats.workers.forEach((w) => push(state.ingress, 'worker ' + w.index, w.ingress_pps));
  const totals = {};
  stats.transports.forEach((t) => {
    for (const [reason, n] of Object.entries(t.drops)) totals[reason] = (totals[reason] || 0) + n;
    push(state.history, t.id, t.enforcing ? 1 : 0);
  });
  const prevTotals = state.prevTotals || {};
  state.reasons = Object.keys(totals);
  state.reasons.forEach((r) => push(state.drops, r, Math.max(0, (totals[r] - (prevTotals[r] || 0)) / dt)));
  state.prevTotals = totals;
  draw(document.getElementById('ingress'), state.ingress);
  draw(document.getElementById('drops'), state.drops);
  legend(state.reasons);
  const body = document.querySelector('#transports tbody');
  body.innerHTML = '';
  stats.transports.forEach((t) => {
    const tr = document.createElement('tr');
    const dropText = Object.entries(t.drops).filter(([, n]) => n > 0).map(([r, n]) => r + ' ' + n).join(', ') || '0';
    const cells = [t.id.slice(0, 12), t.worker, t.srtpplus || 'no', t.enforcing ? 'ENFORCING' : 'off',
      Math.round(t.detector.ingress_pps), Math.round(t.detector.baseline_pps),
      t.detector.switches_on + ' on / ' + t.detector.switches_off + ' off',
      t.detector.switches_on ? t.detector.detection_delay_ms.toFixed(1) + ' ms' : '-', t.rtp_received, dropText];
    cells.forEach((v, i) => {
      const td = document.createElement('td');
      td.textContent = v;
      if (i === 3) td.className = t.enforcing ? 'on' : 'off';
      tr.appendChild(td);
    });
    const td = document.createElement('td');
    td.appendChild(historyCanvas(t.id));
    tr.appendChild(td);
    body.appendChild(tr);
  });
  document.getElementById('updated').textContent = 'updated ' + new Date(stats.time * 1000).toLocaleTimeString();
  state.last = stats;
  state.updates = (state.updates || 0) + 1;
}

// The API token, when the gateway has one: open the page as
// dashboard.html#token=<token> (a fragment never reaches the server's logs).
const apiToken = new URLSearchParams(location.hash.slice(1)).get('token');
const apiHeaders = apiToken ? { Authorization: 'Bearer ' + apiToken } : {};

async function poll() {
  try {
    const r = await fetch('/api/stats', { headers: apiHeaders });
    if (r.status === 401) {
      document.getElementById('updated').textContent =
        'the API needs its token: open this page as dashboard.html#token=<token>';
      return;
    }
    if (r.ok) render(await r.json());
  } catch (e) {
    document.getElementById('updated').textContent = 'gateway unreachable';
  }
}
poll();
setInterval(poll, 1000);
