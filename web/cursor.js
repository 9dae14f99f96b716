// The app's cursor as the page's over the windows: its pixels (BGRA,
// premultiplied) made an image, at the output's scale, with its hotspot.
export function setCursor(desk, m) {
  let cursor = 'none';
  if (m.width > 0 && m.height > 0) {
    const c = document.createElement('canvas');
    c.width = m.width;
    c.height = m.height;
    const ctx = c.getContext('2d');
    const img = ctx.createImageData(m.width, m.height);
    for (let p = 0; p < m.pixels.length; p += 4) {
      const a = m.pixels[p + 3];
      const k = a ? 255 / a : 0;
      img.data[p] = Math.min(255, Math.round(m.pixels[p + 2] * k));
      img.data[p + 1] = Math.min(255, Math.round(m.pixels[p + 1] * k));
      img.data[p + 2] = Math.min(255, Math.round(m.pixels[p] * k));
      img.data[p + 3] = a;
    }
    ctx.putImageData(img, 0, 0);
    let url = c.toDataURL('image/png');
    let hx = m.hotspot_x;
    let hy = m.hotspot_y;
    if (m.scale > 1) {
      const s = document.createElement('canvas');
      s.width = Math.max(1, Math.round(m.width / m.scale));
      s.height = Math.max(1, Math.round(m.height / m.scale));
      s.getContext('2d').drawImage(c, 0, 0, s.width, s.height);
      url = s.toDataURL('image/png');
      hx = Math.round(hx / m.scale);
      hy = Math.round(hy / m.scale);
    }
    cursor = `url(${url}) ${Math.max(0, hx)} ${Math.max(0, hy)}, default`;
  }
  desk.style.setProperty('--rcomp-cursor', cursor);
}
