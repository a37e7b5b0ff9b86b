// The sentence that introduces the JSON Schema in a strict: false request ("One model call, in
// order", step 1). The engine writes it and the simulator reads it, so it lives in this leaf module
// that both may import.
export const SCHEMA_INSTRUCTION = 'Respond with only a JSON value that matches this JSON Schema:';
