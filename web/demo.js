// The echo demo: publish camera and microphone to /whip/echo, show what comes
// back, chat over a data channel, and keep live stats (also exposed as
// window.moatDemo for automated tests).
const $ = (id) => document.getElementById(id);
const demo = { pc: null, whip: null, channel: null, chat: [], stats: {} };
window.moatDemo = demo;

function setState(text) { $('state').textContent = text; }

function logChat(who, text) {
  demo.chat.push({ who, text });
  const line = document.createElement('div');
  line.textContent = who + ': ' + text;
  $('chatlog').appendChild(line);
  $('chatlog').scrollTop = 1e9;
}

async function refreshStats() {
  if (!demo.pc) return;
  const report = await demo.pc.getStats();
  const rows = {};
  report.forEach((s) => {
    if (s.type === 'inbound-rtp') {
      rows['in ' + s.kind + ' packets'] = s.packetsReceived;
      rows['in ' + s.kind + ' bytes'] = s.bytesReceived;
      rows['in ' + s.kind + ' lost'] = s.packetsLost;
      rows['in ' + s.kind + ' jitter ms'] = Math.round((s.jitter || 0) * 1000);
      if (s.kind === 'video') rows['in video frames decoded'] = s.framesDecoded;
    } else if (s.type === 'outbound-rtp') {
      rows['out ' + s.kind + ' packets'] = s.packetsSent;
    } else if (s.type === 'candidate-pair' && s.nominated) {
      rows['round trip ms'] = Math.round((s.currentRoundTripTime || 0) * 1000);
    }
  });
  demo.stats = rows;
  const body = $('stats').querySelector('tbody');
  body.innerHTML = '';
  for (const [k, v] of Object.entries(rows)) {
    const tr = document.createElement('tr');
    tr.innerHTML = '<td></td><td></td>';
    tr.children[0].textContent = k;
    tr.children[1].textContent = v;
    body.appendChild(tr);
  }
}

async function start() {
  $('start').disabled = true;
  try {
    setState('getting media');
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 480 } });
    $('local').srcObject = stream;
    const pc = new RTCPeerConnection();
    demo.pc = pc;
    stream.getTracks().forEach((t) => pc.addTransceiver(t, { direction: 'sendrecv', streams: [stream] }));
    const remote = new MediaStream();
    $('remote').srcObject = remote;
    pc.ontrack = (e) => remote.addTrack(e.track);
    pc.onconnectionstatechange = () => setState(pc.connectionState);
    demo.channel = pc.createDataChannel('chat');
    demo.channel.onmessage = (e) => logChat('echo', e.data);
    demo.channel.onopen = () => logChat('system', 'data channel open');
    demo.whip = new WhipClient($('endpoint').value, $('token').value);
    setState('connecting');
    await demo.whip.publish(pc);
    $('stop').disabled = false;
    demo.timer = setInterval(refreshStats, 1000);
  } catch (err) {
    setState('error: ' + err.message);
    $('start').disabled = false;
  }
}

async function stop() {
  clearInterval(demo.timer);
  if (demo.whip) await demo.whip.hangUp();
  if (demo.pc) demo.pc.close();
  demo.pc = null;
  $('stop').disabled = true;
  $('start').disabled = false;
  setState('idle');
}

$('start').onclick = start;
$('stop').onclick = stop;
$('chatform').onsubmit = (e) => {
  e.preventDefault();
  const text = $('chatinput').value;
  if (demo.channel && demo.channel.readyState === 'open' && text) {
    demo.channel.send(text);
    logChat('me', text);
    $('chatinput').value = '';
  }
};
if (new URLSearchParams(location.search).has('autostart')) start();
