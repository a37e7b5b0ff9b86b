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

  constructor(max = LABEL_VALUES_MAX) {
    this.providers = new BoundedValues(max);
    this.models = new BoundedValues(max);
    this.flows = new BoundedValues(max);
    this.nodes = new BoundedValues(max);
  }

  /** `provider:model-id` as the labels `provider` and `model` (the id, as the GenAI conventions' gen_ai.request.model). */
  model(modelString: string): { provider: string; model: string } {
    const ref = parseModelString(modelString);
    if (!ref) return { provider: OTHER, model: OTHER };
    return { provider: this.providers.of(ref.provider), model: this.models.of(ref.modelId) };
  }

  flow(name: string): string {
    return this.flows.of(name);
  }

  /** a node id as its flow file names it (NODE_ID: letters, digits, `_`, `-`) */
  node(id: string): string {
    return this.nodes.of(id);
  }
}
