// The two per-rank charts of the Distributed page (computation vs communication;
// synchronizing vs transfer): stacked bars for a few ranks, heat strips (one column per
// rank) for many. They follow the page's step and picked rank.

import { createChart, type ChartHandle, type OptionBuilder } from '../../components/chart';
import { replaceChildren } from '../../components/dom';
import { HeatStrip } from '../../components/heat_strip';
import type { ThemeWatcher } from '../../components/theme';
import { heatRows, rankTooltipLines, stackedByRank, type SeriesStyle } from './charts';
import {
  PART_COLOR,
  PART_HELP,
  PART_LABEL,
  PARTS,
  seriesByRank,
  SYNC_COLOR,
  SYNC_HELP,
  SYNC_LABEL,
  SYNC_PARTS,
  type Part,
  type RankRow,
  type SyncPart,
  type ValueKey,
} from './model';

const PART_STYLE: SeriesStyle<Part> = { label: PART_LABEL, color: PART_COLOR, help: PART_HELP };
const SYNC_STYLE: SeriesStyle<SyncPart> = { label: SYNC_LABEL, color: SYNC_COLOR, help: SYNC_HELP };

const stepTime = (row: RankRow): number => row.values?.step_time ?? 0;
const collectiveTime = (row: RankRow): number =>
  (row.values?.sync_wait ?? 0) + (row.values?.transfer ?? 0);

/** One chart's series: which parts, drawn how, against which whole. */
interface ChartSeries<K extends ValueKey> {
  keys: readonly K[];
  style: SeriesStyle<K>;
  base: (row: RankRow) => number;
  barTag: string;
  heatTestid: string;
}

const BREAKDOWN: ChartSeries<Part> = {
  keys: PARTS,
  style: PART_STYLE,
  base: stepTime,
  barTag: 'time',
  heatTestid: 'rank-breakdown-heat',
};
const SYNC: ChartSeries<SyncPart> = {
  keys: SYNC_PARTS,
  style: SYNC_STYLE,
  base: collectiveTime,
  barTag: 'sync',
  heatTestid: 'rank-sync-heat',
};

function barOption<K extends ValueKey>(s: ChartSeries<K>, rows: readonly RankRow[]): OptionBuilder {
  return stackedByRank(seriesByRank(rows, s.keys), rows, s.style, s.base, s.barTag);
}

export interface RankChartHooks {
  themes: ThemeWatcher;
  signal: AbortSignal;
  /** The heat strip's column was clicked: pick (or unpick) that rank. */
  toggleRank: (rank: number) => void;
}

export class RankCharts {
  private charts: ChartHandle[] = [];
  private heat: HeatStrip[] = [];
  private rows: readonly RankRow[] = [];
  private selected: number | undefined;

  constructor(
    private readonly hooks: RankChartHooks,
    private readonly elements: readonly [breakdown: HTMLElement, sync: HTMLElement],
    private readonly manyRanks: boolean,
  ) {}

  /** Draws both charts for these rows, the picked rank's column marked. */
  async render(rows: readonly RankRow[], selectedRank: number | undefined): Promise<void> {
    this.rows = rows;
    this.selected = selectedRank;
    const [breakdownEl, syncEl] = this.elements;
    if (this.manyRanks) {
      this.heat.push(this.strip(breakdownEl, BREAKDOWN), this.strip(syncEl, SYNC));
      return;
    }
    const charts: [HTMLElement, OptionBuilder][] = [
      [breakdownEl, barOption(BREAKDOWN, rows)],
      [syncEl, barOption(SYNC, rows)],
    ];
    for (const [el, option] of charts) {
      const chart = await createChart(el, option, this.hooks.themes);
      if (this.hooks.signal.aborted) {
        chart.dispose(); // the user left while ECharts loaded
        return;
      }
      this.charts.push(chart);
    }
  }

  /** New rows (another step): the same charts, redrawn. */
  update(rows: readonly RankRow[]): void {
    this.rows = rows;
    const [breakdownChart, syncChart] = this.charts;
    breakdownChart?.update(barOption(BREAKDOWN, rows));
    syncChart?.update(barOption(SYNC, rows));
    const [breakdownHeat, syncHeat] = this.heat;
    breakdownHeat?.update(this.heatUpdate(BREAKDOWN));
    syncHeat?.update(this.heatUpdate(SYNC));
  }

  /** Another rank picked (or none). */
  select(rows: readonly RankRow[], rank: number | undefined): void {
    this.rows = rows;
    this.selected = rank;
    for (const strip of this.heat) strip.update({ selected: this.selectedColumn() });
  }

  dispose(): void {
    for (const chart of this.charts.splice(0)) chart.dispose();
    for (const strip of this.heat.splice(0)) strip.destroy();
  }

  private selectedColumn(): number | undefined {
    if (this.selected === undefined) return undefined;
    const index = this.rows.findIndex((r) => r.rank === this.selected);
    return index >= 0 ? index : undefined;
  }

  private heatUpdate<K extends ValueKey>(s: ChartSeries<K>) {
    const rows = this.rows;
    return {
      rows: heatRows(seriesByRank(rows, s.keys), s.style),
      tooltip: (c: number) => rankTooltipLines(rows[c], s.keys, s.style, s.base),
      selected: this.selectedColumn(),
    };
  }

  private strip<K extends ValueKey>(el: HTMLElement, s: ChartSeries<K>): HeatStrip {
    const rows = this.rows;
    const data = seriesByRank(rows, s.keys);
    const heat = new HeatStrip(
      {
        columns: data.labels,
        rows: heatRows(data, s.style),
        axisName: 'Rank',
        tooltip: (c) => rankTooltipLines(rows[c], s.keys, s.style, s.base),
        onSelect: (c) => {
          const rank = rows[c]?.rank;
          if (rank !== undefined) this.hooks.toggleRank(rank);
        },
        selected: this.selectedColumn(),
        testid: s.heatTestid,
      },
      this.hooks.themes,
    );
    replaceChildren(el, heat.element);
    return heat;
  }
}
