// The label values of AQVEN's metrics, bounded (DESIGN: Observability, "Metrics"). Every label value
// comes from a closed list (outcomes, causes, actions, try errors, run statuses, detectors) or from
// the project's files (provider, model id, flow, node id: names `aqven check` accepts), never from a
// run's input, a run id or failure text. The project's names are bounded by the project; as a
// backstop against a process that outlives many projects, each such label keeps at most
// LABEL_VALUES_MAX distinct values and reports any later one as `other`.
import { parseModelString } from '@/lib/engine/model-string';

/** distinct values a project-named label (provider, model, flow, node) keeps per process before the rest read `other` */
export const LABEL_VALUES_MAX = 200;
/** what a label past LABEL_VALUES_MAX, or a model string that does not parse, reads */
export const OTHER = 'other';

/** A model's two labels, and a key naming them (for a series' key, metrics.ts). */
export interface ModelLabels {
  labels: { provider: string; model: string };
  key: string;
}

/** One label's values: the first LABEL_VALUES_MAX as they are, any later one `other`. */
export class BoundedValues {
  private readonly seen = new Set<string>();
  constructor(private readonly max = LABEL_VALUES_MAX) {}

  of(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max) return OTHER;
    this.seen.add(value);
    return value;
  }
}

/** The bounded label sets of one metrics registry. */
export class MetricLabels {
  private readonly providers: BoundedValues;
  private readonly models: BoundedValues;
  private readonly flows: BoundedValues;
  private readonly nodes: BoundedValues;

  constructor(private readonly max = LABEL_VALUES_MAX) {
    this.providers = new BoundedValues(max);
    this.models = new BoundedValues(max);
    this.flows = new BoundedValues(max);
    this.nodes = new BoundedValues(max);
  }

  /** the labels of each model string met, up to as many strings as a label keeps values (a parse per event is avoidable work) */
  private readonly modelLabels = new Map<string, ModelLabels>();

  /** `provider:model-id` as the labels `provider` and `model` (the id, as the GenAI conventions' gen_ai.request.model), and a key naming the pair. */
  model(modelString: string): ModelLabels {
    const known = this.modelLabels.get(modelString);
    if (known) return known;
    const ref = parseModelString(modelString);
    const labels = ref ? { provider: this.providers.of(ref.provider), model: this.models.of(ref.modelId) } : { provider: OTHER, model: OTHER };
    const made = { labels, key: `${labels.provider}\u0000${labels.model}` };
    if (this.modelLabels.size < this.max) this.modelLabels.set(modelString, made);
    return made;
  }

  flow(name: string): string {
    return this.flows.of(name);
  }

  /** a node id as its flow file names it (NODE_ID: letters, digits, `_`, `-`) */
  node(id: string): string {
    return this.nodes.of(id);
  }
}
