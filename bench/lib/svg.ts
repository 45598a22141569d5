// A hand-written SVG line chart: objects completed over time, one line per series.

export interface Series {
  label: string;
  color: string;
  /** [seconds, objects completed] in time order. */
  points: [number, number][];
}

const W = 760, H = 420, L = 70, R = 20, T = 50, B = 60;

/** Renders the series on shared axes, with a title and a footnote line. */
export function lineChart(title: string, series: Series[], footnote: string): string {
  const maxX = niceMax(Math.max(0.001, ...series.flatMap((s) => s.points.map((p) => p[0]))));
  const maxY = niceMax(Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[1]))));
  const x = (v: number) => L + (v / maxX) * (W - L - R);
  const y = (v: number) => H - B - (v / maxY) * (H - T - B);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
      `font-family="Helvetica, Arial, DejaVu Sans, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${W / 2}" y="24" text-anchor="middle" font-size="15" font-weight="600">${esc(title)}</text>`,
  );
  for (let i = 0; i <= 5; i++) {
    const vy = (maxY / 5) * i, vx = (maxX / 5) * i;
    out.push(
      `<line x1="${L}" x2="${W - R}" y1="${y(vy)}" y2="${y(vy)}" stroke="#e5e7eb"/>`,
      `<text x="${L - 8}" y="${y(vy) + 4}" text-anchor="end" fill="#374151">${fmt(vy)}</text>`,
      `<line x1="${x(vx)}" x2="${x(vx)}" y1="${T}" y2="${H - B}" stroke="#f3f4f6"/>`,
      `<text x="${x(vx)}" y="${H - B + 18}" text-anchor="middle" fill="#374151">${fmt(vx)}</text>`,
    );
  }
  out.push(
    `<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="#6b7280"/>`,
    `<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="#6b7280"/>`,
    `<text x="${(L + W - R) / 2}" y="${
      H - B + 38
    }" text-anchor="middle" fill="#111827">seconds since the first create</text>`,
    `<text transform="translate(18 ${
      (T + H - B) / 2
    }) rotate(-90)" text-anchor="middle" fill="#111827">objects with status Ok</text>`,
  );
  series.forEach((s, i) => {
    const pts = thin(s.points, 400).map(([px, py]) => `${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(" ");
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2.2" points="${pts}"/>`);
    const ly = T + 8 + i * 18;
    out.push(
      `<line x1="${L + 14}" x2="${L + 38}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="3"/>`,
      `<text x="${L + 44}" y="${ly + 4}" fill="#111827">${esc(s.label)}</text>`,
    );
  });
  out.push(`<text x="${L}" y="${H - 8}" fill="#6b7280" font-size="11">${esc(footnote)}</text>`, `</svg>`);
  return out.join("\n") + "\n";
}

/** Keeps at most `n` points, always the first and last. */
function thin(points: [number, number][], n: number): [number, number][] {
  if (points.length <= n) return points;
  const step = points.length / n;
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++) out.push(points[Math.floor(i * step)]);
  out.push(points[points.length - 1]);
  return out;
}

function niceMax(v: number): number {
  const exp = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * exp >= v) return m * exp;
  return 10 * exp;
}

function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(v < 1 ? 2 : 1);
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
