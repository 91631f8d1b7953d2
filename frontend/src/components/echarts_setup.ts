// The only module that imports ECharts: just the chart types and components we use, so
// the bundle stays small. Loaded lazily (dynamic import) into its own chunk.

import { BarChart, LineChart, PieChart, ScatterChart } from 'echarts/charts';
import {
  DataZoomInsideComponent,
  DataZoomSliderComponent,
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  MarkLineComponent,
  MarkPointComponent,
  TooltipComponent,
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([BarChart, PieChart, GridComponent, LegendComponent, TooltipComponent, CanvasRenderer]);
// Memory view: step-line curves with the peak marked.
echarts.use([LineChart, MarkLineComponent, MarkPointComponent]);
// Operators and Kernels: the roofline (log-log scatter under its roofs).
echarts.use([ScatterChart]);
// Memory snapshot: the trace's window shaded on the snapshot's timeline, zoomed to it (the
// wheel and the slider under the chart move the window).
echarts.use([MarkAreaComponent, DataZoomInsideComponent, DataZoomSliderComponent]);

export { echarts };
