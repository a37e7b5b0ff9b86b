// Which models a limits probe may measure: the ones the project can call.
import { parseModelString } from '@/lib/engine/model-string';
import { agentPolicy, type Project } from '@/lib/project';

/** The model is not one the project can call: named with the models its agents use. */
export class UnknownModelError extends Error {
  constructor(
    readonly model: string,
    readonly known: string[],
  ) {
    super(`${model} is not a model of this project${known.length ? `; its agents use ${known.join(', ')}` : ''}`);
    this.name = 'UnknownModelError';
  }
}

/** Every model the project's agents name (model, then fallbacks), in agent order, once each. */
export function agentModels(project: Project): string[] {
  return [...new Set(Object.values(project.agents).flatMap((a) => agentPolicy(a).chain))];
}

/** `model` if the project can call it: an agent uses it, or its provider's catalogue lists it; else UnknownModelError. */
export function checkModel(project: Project, model: string): void {
  const known = agentModels(project);
  if (known.includes(model)) return;
  const ref = parseModelString(model);
  const provider = ref && Object.hasOwn(project.providers, ref.provider) ? project.providers[ref.provider] : undefined;
  if (provider && Object.hasOwn(provider.models, ref!.modelId)) return;
  throw new UnknownModelError(model, known);
}
