// The chosen clip playing: the source and the decoded skeleton side by side, each
// bone (a line from its parent's joint to its own) coloured by its error at the
// sample, green at 0, yellow at half the precision, red at the precision and beyond.
// The view looks along a horizontal axis; drag to turn it about the vertical.
(function () {
  const clip = JSON.parse(document.getElementById('clip-data').textContent);
  const bones = clip.parents.length;
  const joints = (which, s, b) => {
    const i = 3 * (s * bones + b);
    return [clip[which][i], clip[which][i + 1], clip[which][i + 2]];
  };
  // Up is the axis along which a pose spreads most on average (a standing body is
  // taller than it is wide); the view turns about it.
  const spread = [0, 0, 0];
  for (let s = 0; s < clip.samples; s++) {
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (let b = 0; b < bones; b++) {
      const p = joints('source', s, b);
      for (let a = 0; a < 3; a++) { lo[a] = Math.min(lo[a], p[a]); hi[a] = Math.max(hi[a], p[a]); }
    }
    for (let a = 0; a < 3; a++) spread[a] += hi[a] - lo[a];
  }
  const up = spread.indexOf(Math.max(...spread));
  const across = [0, 1, 2].filter((a) => a !== up);
  let angle = 0.6;
  const project = (p) => {
    const [a, c] = across;
    return [p[a] * Math.cos(angle) + p[c] * Math.sin(angle), p[up], -p[a] * Math.sin(angle) + p[c] * Math.cos(angle)];
  };
  // The view follows the skeleton across the screen: each sample is centred on the
  // source skeleton's mean joint (the same shift for both views, so they compare),
  // and one scale fits every sample.
  const centre = (s) => {
    let x = 0;
    for (let b = 0; b < bones; b++) x += project(joints('source', s, b))[0];
    return x / Math.max(1, bones);
  };
  let bounds, centres;
  const fit = () => {
    bounds = { x0: Infinity, x1: -Infinity, y0: Infinity, y1: -Infinity };
    centres = [];
    for (let s = 0; s < clip.samples; s++) {
      centres.push(centre(s));
      for (let b = 0; b < bones; b++) {
        const [x, y] = project(joints('source', s, b));
        bounds.x0 = Math.min(bounds.x0, x - centres[s]); bounds.x1 = Math.max(bounds.x1, x - centres[s]);
        bounds.y0 = Math.min(bounds.y0, y); bounds.y1 = Math.max(bounds.y1, y);
      }
    }
  };
  const colour = (error) => {
    const t = Math.min(1, Math.max(0, error / clip.precision));
    const r = Math.round(t < 0.5 ? 510 * t : 255);
    const g = Math.round(t < 0.5 ? 200 : 200 * (1 - t) * 2);
    return `rgb(${r},${g},40)`;
  };
  const draw = (canvas, which, s) => {
    const g = canvas.getContext('2d');
    g.clearRect(0, 0, canvas.width, canvas.height);
    const pad = 20;
    const scale = Math.min((canvas.width - 2 * pad) / Math.max(1e-9, bounds.x1 - bounds.x0),
                           (canvas.height - 2 * pad) / Math.max(1e-9, bounds.y1 - bounds.y0));
    const width = (bounds.x1 - bounds.x0) * scale;
    const left = pad + (canvas.width - 2 * pad - width) / 2;
    const at = (p) => {
      const [x, y] = project(p);
      return [left + (x - centres[s] - bounds.x0) * scale, canvas.height - pad - (y - bounds.y0) * scale];
    };
    g.lineWidth = 3;
    g.lineCap = 'round';
    for (let b = 0; b < bones; b++) {
      const parent = clip.parents[b];
      const error = clip.errors[s * bones + b];
      const [x1, y1] = at(joints(which, s, b));
      g.strokeStyle = which === 'decoded' ? colour(error) : '#4a6fa5';
      g.fillStyle = g.strokeStyle;
      if (parent !== null) {
        const [x0, y0] = at(joints(which, s, parent));
        // A link to a root (often a still origin the character walks away from) is
        // drawn thin and dashed, so the body stays what catches the eye.
        const toRoot = clip.parents[parent] === null;
        g.save();
        if (toRoot) { g.lineWidth = 1; g.setLineDash([4, 4]); g.strokeStyle = '#aaa'; }
        g.beginPath(); g.moveTo(x0, y0); g.lineTo(x1, y1); g.stroke();
        g.restore();
      }
      g.beginPath(); g.arc(x1, y1, 2.5, 0, 2 * Math.PI); g.fill();
    }
  };
  const source = document.getElementById('source');
  const decoded = document.getElementById('decoded');
  const slider = document.getElementById('time');
  const label = document.getElementById('label');
  const button = document.getElementById('play');
  slider.max = String(Math.max(0, clip.samples - 1));
  let sample = 0, playing = true, last = 0;
  const show = () => {
    draw(source, 'source', sample);
    draw(decoded, 'decoded', sample);
    let worst = 0, bone = 0;
    for (let b = 0; b < bones; b++) {
      const e = clip.errors[sample * bones + b];
      if (e > worst) { worst = e; bone = b; }
    }
    slider.value = String(sample);
    label.textContent = `sample ${sample} (${(sample / clip.rate).toFixed(2)} s): largest error ${worst.toPrecision(3)} at ${clip.names[bone]}`;
  };
  const tick = (now) => {
    if (playing && now - last >= 1000 / clip.rate) {
      last = now;
      sample = (sample + 1) % Math.max(1, clip.samples);
      show();
    }
    requestAnimationFrame(tick);
  };
  button.onclick = () => { playing = !playing; button.textContent = playing ? 'pause' : 'play'; };
  slider.oninput = () => { sample = Number(slider.value); playing = false; button.textContent = 'play'; show(); };
  for (const canvas of [source, decoded]) {
    let dragging = null;
    canvas.onmousedown = (e) => { dragging = e.clientX; };
    window.addEventListener('mouseup', () => { dragging = null; });
    canvas.onmousemove = (e) => {
      if (dragging === null) return;
      angle += (e.clientX - dragging) * 0.01;
      dragging = e.clientX;
      fit();
      show();
    };
  }
  fit();
  show();
  requestAnimationFrame(tick);
})();
