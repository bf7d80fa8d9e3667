// The room demo: publish camera and microphone to /whip/room/<room>, or watch
// the room's publisher through /whep/room/<room> (a recvonly offer; WHEP is
// the same exchange as WHIP). Live stats are exposed as window.moatRoom for
// automated tests; ?room=<name>&publish=1 or &watch=1 start at once.
// For browsers the tests cannot drive (Firefox: no WebDriver here),
// &report=<url> POSTs the stats there as JSON at each refresh (a loopback
// URL only: a link cannot send a viewer's stats elsewhere), and
// &interval=<ms> sets the refresh (default 1000).
const $ = (id) => document.getElementById(id);
const room = { pc: null, client: null, stats: {}, role: null };
const query = new URLSearchParams(location.search);
const reportUrl = (() => {
  try {
    const url = new URL(query.get('report'));
    return ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) ? url.href : null;
  } catch (err) { return null; }
})();
window.moatRoom = room;

function setState(text) { $('state').textContent = text; }

async function refreshStats() {
  if (!room.pc) return;
  const report = await room.pc.getStats();
  const rows = {};
  report.forEach((s) => {
    if (s.type === 'inbound-rtp') {
      rows['in ' + s.kind + ' packets'] = s.packetsReceived;
      rows['in ' + s.kind + ' bytes'] = s.bytesReceived;
      rows['in ' + s.kind + ' lost'] = s.packetsLost;
      if (s.kind === 'video') {
        rows['in video frames decoded'] = s.framesDecoded;
        rows['in video size'] = (s.frameWidth || 0) + 'x' + (s.frameHeight || 0);
        rows['in video width'] = s.frameWidth || 0;
        rows['in video pli'] = s.pliCount || 0;
        rows['in video fir'] = s.firCount || 0;
      }
    } else if (s.type === 'outbound-rtp') {
      rows['out ' + s.kind + ' packets'] = (rows['out ' + s.kind + ' packets'] || 0) + s.packetsSent;
      if (s.rid) {
        rows['out video ' + s.rid + ' size'] = (s.frameWidth || 0) + 'x' + (s.frameHeight || 0);
        rows['out video ' + s.rid + ' packets'] = s.packetsSent;
      }
    }
  });
  rows['connection'] = room.pc.connectionState;
  rows['time'] = Date.now(); /* when these were read (ms since the epoch) */
  room.stats = rows;
  if (reportUrl) {
    // A simple request (text/plain, no-cors): the collector needs no CORS.
    fetch(reportUrl, { method: 'POST', mode: 'no-cors', body: JSON.stringify(rows) })
      .catch(() => {});
  }
  const body = $('stats').querySelector('tbody');
  body.innerHTML = '';
  for (const [k, v] of Object.entries(rows)) {
    const tr = document.createElement('tr');
    tr.innerHTML = '<td></td><td></td>';
    tr.children[0].textContent = k;
    tr.children[1].textContent = v;
    body.appendChild(tr);
  }
  try {
    const r = await fetch('/api/rooms/' + encodeURIComponent($('room').value));
    $('roominfo').textContent = JSON.stringify(await r.json(), null, 1);
  } catch (err) { /* the API may be token-protected */ }
}

async function join(role) {
  $('publish').disabled = $('watch').disabled = true;
  room.role = role;
  try {
    const pc = new RTCPeerConnection();
    room.pc = pc;
    pc.onconnectionstatechange = () => setState(role + ': ' + pc.connectionState);
    const remote = new MediaStream();
    pc.ontrack = (e) => { remote.addTrack(e.track); $('remote').srcObject = remote; };
    const name = encodeURIComponent($('room').value);
    if (role === 'publish') {
      setState('getting media');
      // ?simulcast=1: three layers (RFC 8853) of a 1280x720 camera;
      // &temporal=1: each with three VP8 temporal layers (L1T3).
      const simulcast = query.has('simulcast');
      const temporal = query.has('temporal') ? { scalabilityMode: 'L1T3' } : {};
      const size = simulcast ? { width: 1280, height: 720 } : { width: 640, height: 480 };
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: size });
      $('local').srcObject = stream;
      stream.getTracks().forEach((t) => {
        const init = { direction: 'sendonly', streams: [stream] };
        if (simulcast && t.kind === 'video') {
          init.sendEncodings = [{ rid: 'h', ...temporal },
            { rid: 'm', scaleResolutionDownBy: 2, ...temporal },
            { rid: 'l', scaleResolutionDownBy: 4, ...temporal }];
        }
        pc.addTransceiver(t, init);
      });
      room.client = new WhipClient('/whip/room/' + name, $('token').value);
    } else {
      pc.addTransceiver('audio', { direction: 'recvonly' });
      pc.addTransceiver('video', { direction: 'recvonly' });
      room.client = new WhipClient('/whep/room/' + name, $('token').value);
    }
    setState('connecting');
    await room.client.publish(pc);
    $('stop').disabled = false;
    room.timer = setInterval(refreshStats, Number(query.get('interval')) || 1000);
  } catch (err) {
    setState('error: ' + err.message);
    if (reportUrl) {
      fetch(reportUrl, { method: 'POST', mode: 'no-cors',
        body: JSON.stringify({ error: err.message }) }).catch(() => {});
    }
    $('publish').disabled = $('watch').disabled = false;
  }
}

async function leave() {
  clearInterval(room.timer);
  if (room.client) await room.client.hangUp();
  if (room.pc) room.pc.close();
  room.pc = null;
  $('stop').disabled = true;
  $('publish').disabled = $('watch').disabled = false;
  setState('idle');
}

$('publish').onclick = () => join('publish');
$('watch').onclick = () => join('watch');
$('stop').onclick = leave;
if (query.get('room')) $('room').value = query.get('room');
if (query.has('publish')) join('publish');
else if (query.has('watch')) join('watch');
