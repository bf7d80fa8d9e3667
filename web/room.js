// The room demo: publish camera and microphone to /whip/room/<room>, or watch
// the room's publisher through /whep/room/<room> (a recvonly offer; WHEP is
// the same exchange as WHIP). Live stats are exposed as window.moatRoom for
// automated tests; ?room=<name>&publish=1 or &watch=1 start at once.
const $ = (id) => document.getElementById(id);
const room = { pc: null, client: null, stats: {}, role: null };
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
      }
    } else if (s.type === 'outbound-rtp') {
      rows['out ' + s.kind + ' packets'] = (rows['out ' + s.kind + ' packets'] || 0) + s.packetsSent;
      if (s.rid) {
        rows['out video ' + s.rid + ' size'] = (s.frameWidth || 0) + 'x' + (s.frameHeight || 0);
        rows['out video ' + s.rid + ' packets'] = s.packetsSent;
      }
    }
  });
  room.stats = rows;
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
      // ?simulcast=1: three layers (RFC 8853) of a 1280x720 camera.
      const simulcast = new URLSearchParams(location.search).has('simulcast');
      const size = simulcast ? { width: 1280, height: 720 } : { width: 640, height: 480 };
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: size });
      $('local').srcObject = stream;
      stream.getTracks().forEach((t) => {
        const init = { direction: 'sendonly', streams: [stream] };
        if (simulcast && t.kind === 'video') {
          init.sendEncodings = [{ rid: 'h' }, { rid: 'm', scaleResolutionDownBy: 2 },
            { rid: 'l', scaleResolutionDownBy: 4 }];
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
    room.timer = setInterval(refreshStats, 1000);
  } catch (err) {
    setState('error: ' + err.message);
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
const params = new URLSearchParams(location.search);
if (params.get('room')) $('room').value = params.get('room');
if (params.has('publish')) join('publish');
else if (params.has('watch')) join('watch');
