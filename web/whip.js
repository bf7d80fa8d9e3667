// A small WHIP client (RFC 9725): POST the offer, keep the resource URL,
// DELETE it to hang up. The gateway is ICE-lite, so the browser needs only
// the answer's candidates; its own are not trickled.
class WhipClient {
  constructor(endpoint, token) {
    this.endpoint = endpoint;
    this.token = token;
    this.resource = null;
  }
  headers(type) {
    const h = { 'Content-Type': type };
    if (this.token) h['Authorization'] = 'Bearer ' + this.token;
    return h;
  }
  async publish(pc) {
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    const response = await fetch(this.endpoint, {
      method: 'POST', headers: this.headers('application/sdp'), body: pc.localDescription.sdp,
    });
    if (response.status !== 201) {
      throw new Error('WHIP ' + response.status + ': ' + (await response.text()));
    }
    this.resource = new URL(response.headers.get('Location'), new URL(this.endpoint, location.href)).href;
    await pc.setRemoteDescription({ type: 'answer', sdp: await response.text() });
  }
  async hangUp() {
    if (!this.resource) return;
    await fetch(this.resource, { method: 'DELETE', headers: this.headers('text/plain') });
    this.resource = null;
  }
}
