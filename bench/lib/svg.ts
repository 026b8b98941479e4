export interface Series {
  name: string;
  /** One value per category, in category order. */
  values: readonly number[];
}

export interface BarChartOptions {
  title: string;
  /** X-axis groups, e.g. batch sizes. */
  categories: readonly string[];
  series: readonly Series[];
  yLabel: string;
  width?: number;
  height?: number;
}

const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b'];

function esc(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}

/** A "nice" axis maximum (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 × 10^k) at or above `value`. */
export function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
    if (step * power >= value) return step * power;
  }
  return 10 * power;
}

function compact(value: number): string {
  if (value >= 1e6) return `${+(value / 1e6).toFixed(2)}M`;
  if (value >= 1e3) return `${+(value / 1e3).toFixed(1)}k`;
  return `${+value.toFixed(1)}`;
}

/** A grouped bar chart as a standalone SVG document (no dependency, deterministic output). */
export function groupedBarChart(options: BarChartOptions): string {
  const width = options.width ?? 720;
  const height = options.height ?? 400;
  const { categories, series } = options;
  for (const s of series) {
    if (s.values.length !== categories.length) {
      throw new RangeError(
        `series '${s.name}' has ${s.values.length} values for ${categories.length} categories`,
      );
    }
  }
  const left = 70;
  const right = 20;
  const top = 40;
  const bottom = 70;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.values.filter(Number.isFinite))));
  const y = (v: number): number => top + plotH - (v / max) * plotH;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(options.title)}</text>`,
  );
  for (let i = 0; i <= 5; i++) {
    const v = (max / 5) * i;
    const yy = y(v).toFixed(1);
    out.push(
      `<line x1="${left}" y1="${yy}" x2="${width - right}" y2="${yy}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${yy}" text-anchor="end" dominant-baseline="middle">${compact(v)}</text>`,
    );
  }
  out.push(
    `<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(options.yLabel)}</text>`,
  );
  const groupW = plotW / Math.max(1, categories.length);
  const barW = (groupW * 0.8) / Math.max(1, series.length);
  categories.forEach((category, c) => {
    const x0 = left + c * groupW + groupW * 0.1;
    series.forEach((s, i) => {
      const v = s.values[c] as number;
      if (!Number.isFinite(v)) return;
      const x = x0 + i * barW;
      const yy = y(v);
      out.push(
        `<rect x="${x.toFixed(1)}" y="${yy.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(top + plotH - yy).toFixed(1)}" fill="${COLORS[i % COLORS.length]}"><title>${esc(`${s.name}, ${category}: ${compact(v)}`)}</title></rect>`,
        `<text x="${(x + barW / 2 - 1).toFixed(1)}" y="${(yy - 4).toFixed(1)}" text-anchor="middle" font-size="10">${compact(v)}</text>`,
      );
    });
    out.push(
      `<text x="${(left + c * groupW + groupW / 2).toFixed(1)}" y="${top + plotH + 18}" text-anchor="middle">${esc(category)}</text>`,
    );
  });
  out.push(
    `<line x1="${left}" y1="${top + plotH}" x2="${width - right}" y2="${top + plotH}" stroke="#333"/>`,
  );
  let lx = left;
  series.forEach((s, i) => {
    out.push(
      `<rect x="${lx}" y="${height - 28}" width="12" height="12" fill="${COLORS[i % COLORS.length]}"/>`,
      `<text x="${lx + 16}" y="${height - 18}">${esc(s.name)}</text>`,
    );
    lx += 24 + s.name.length * 7;
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
