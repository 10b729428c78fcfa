// Load one .X text file with three.js's XLoader and print what it made of it (run by
// three_reader.py): "vertices N" (its meshes' vertices: three corners a face), "skinned N"
// (its skinned meshes), one "material NAME R G B" line per mesh material and one
// "track SET FRAME KEYS" line per animated frame. Usage: node xload.mjs XLOADER_MODULE FILE.
// Exit 2 when the loader fails or never calls back.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [moduleFile, file] = process.argv.slice(2);
const { XLoader } = await import(pathToFileURL(moduleFile).href);
const bytes = readFileSync(file);
const data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const timer = setTimeout(() => {
  console.error("XLoader never called back");
  process.exit(2);
}, 60000);
try {
  const loader = new XLoader();
  loader._setArgOption([file, {}]); // what load() does first: the url and its options
  loader.parse(data, (object) => {
    clearTimeout(timer);
    let vertices = 0;
    let skinned = 0;
    for (const model of object.models) {
      vertices += model.geometry.attributes.position.count;
      if (model.isSkinnedMesh) skinned += 1;
      const materials = Array.isArray(model.material) ? model.material : [model.material];
      for (const m of materials) {
        const c = m && m.color ? m.color.toArray() : [NaN, NaN, NaN];
        console.log(`material ${model.name} ${c.join(" ")}`);
      }
    }
    console.log(`vertices ${vertices}`);
    console.log(`skinned ${skinned}`);
    for (const anim of object.animations) {
      for (const h of anim.hierarchy) console.log(`track ${anim.name} ${h.name} ${h.keys.length}`);
    }
  });
} catch (error) {
  clearTimeout(timer);
  console.error(`refused: ${error && error.message ? error.message : error}`);
  process.exit(2);
}
