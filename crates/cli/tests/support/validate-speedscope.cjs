// Validates speedscope files against speedscope's own schema with ajv.
// usage: node validate-speedscope.cjs SCHEMA FILE...   (ajv found through NODE_PATH)
"use strict";
const fs = require("fs");
const Ajv = require("ajv");
const schema = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
let invalid = 0;
for (const file of process.argv.slice(3)) {
  const data = JSON.parse(fs.readFileSync(file, "utf8"));
  if (!validate(data)) {
    invalid++;
    console.log(`${file}: ${JSON.stringify(validate.errors.slice(0, 5))}`);
  }
}
console.log(`${process.argv.length - 3 - invalid} valid, ${invalid} invalid`);
process.exit(invalid ? 1 : 0);
