// web/openapi.yaml checked by strict validators from npm: the document
// against the OpenAPI 3.0 JSON schema (@seriousme/openapi-schema-validator),
// and every JSON answer schema compiled by Ajv in strict mode, which
// refuses `nullable` without `type` (as OpenAPI 3.0.3 says) and unknown
// keywords.  Live answers are then validated against the schema the
// document gives for their route, method and status.
//   node openapi.mjs FILE    checks the document alone
import fs from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import YAML from 'yaml';

// "#/components/schemas/X" in the document names the "sb" schema's $defs.
function rewriteRefs(node) {
	if (Array.isArray(node)) {
		return node.map(rewriteRefs);
	}
	if (node === null || typeof node !== 'object') {
		return node;
	}
	const out = {};
	for (const [key, value] of Object.entries(node)) {
		if (key === '$ref' && typeof value === 'string') {
			out.$ref = value.replace('#/components/schemas/', 'sb#/$defs/');
		} else {
			out[key] = rewriteRefs(value);
		}
	}
	return out;
}

function resolve(doc, node) {
	while (node && node.$ref && node.$ref.startsWith('#/components/')) {
		node = node.$ref.slice(2).split('/').reduce((n, k) => n[k], doc);
	}
	return node;
}

// Loads and checks the document; returns { validate(method, template,
// status, body) -> list of problems }.  Throws with every problem found.
export async function openapiLoad(file) {
	const text = fs.readFileSync(file, 'utf8');
	const doc = YAML.parse(text);
	const problems = [];
	const checked = await new Validator({ strict: true }).validate(doc);
	if (!checked.valid) {
		problems.push(`the document: ${JSON.stringify(checked.errors)}`);
	}
	const ajv = new Ajv({ strict: true, allErrors: true });
	addFormats(ajv);
	ajv.addVocabulary(['example']);
	try {
		ajv.addSchema({ $id: 'sb', $defs: rewriteRefs(doc.components.schemas) });
		ajv.compile({ $ref: 'sb' });
	} catch (e) {
		problems.push(`components.schemas: ${e.message}`);
	}
	const compiled = new Map();
	for (const [template, item] of Object.entries(doc.paths || {})) {
		for (const [method, op] of Object.entries(item)) {
			for (const [status, response] of Object.entries(op.responses || {})) {
				const r = resolve(doc, response);
				const schema = r && r.content && r.content['application/json'] &&
					r.content['application/json'].schema;
				if (!schema) {
					continue;
				}
				try {
					compiled.set(`${method.toUpperCase()} ${template} ${status}`,
						ajv.compile(rewriteRefs(schema)));
				} catch (e) {
					problems.push(`${method} ${template} ${status}: ${e.message}`);
				}
			}
		}
	}
	if (problems.length) {
		throw new Error(problems.join('; '));
	}
	return {
		validate(method, template, status, body) {
			const v = compiled.get(`${method} ${template} ${status}`);
			if (!v) {
				return [`${method} ${template} ${status}: not in the document`];
			}
			return v(body) ? [] : [`${method} ${template} ${status}: ` +
				ajv.errorsText(v.errors)];
		},
	};
}

if (process.argv[1] && process.argv[1].endsWith('openapi.mjs') && process.argv[2]) {
	try {
		await openapiLoad(process.argv[2]);
		console.log(`PASS ${process.argv[2]} is valid`);
	} catch (e) {
		console.log(`FAIL ${process.argv[2]}: ${e.message}`);
		process.exitCode = 1;
	}
}
