// The one Ajv configuration of the product. `aqven check` compiles a project's schemas in `check`
// mode, where a schema Ajv would ignore part of (an unknown keyword like "requried", an unknown
// format) is an error; the engine and the run loop validate values in `validate` mode, which
// differs only in that schema strictness. `strict` itself is not used: it would also switch
// `strictNumbers` (NaN and Infinity) per mode, so the same value could pass one and fail the other.
// With every value-side option shared, a schema that compiled for `check` compiles here and
// validates the same way.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

export type AjvMode = 'check' | 'validate';

export function createAjv(mode: AjvMode): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    // the only difference between the modes: unknown keywords and formats are errors in `check`
    strictSchema: mode === 'check',
    // NaN and Infinity are not JSON numbers, whichever mode
    strictNumbers: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
    logger: false,
  });
  addFormats.default(ajv);
  return ajv;
}
