// The built-in wire adapters, one per protocol (DESIGN: Outcome classification). The engine owns
// the adapter interface and is handed this table (`callNode(call, { adapters: builtinAdapters })`).
import type { AdapterTable } from '@/lib/engine/adapter';
import { anthropicAdapter } from './anthropic';
import { geminiAdapter } from './gemini';
import { openaiAdapter } from './openai';

export const builtinAdapters: AdapterTable = Object.freeze({ openai: openaiAdapter, anthropic: anthropicAdapter, gemini: geminiAdapter });
