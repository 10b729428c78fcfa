// Loads a .X file with Irrlicht 1.8's own loader on the null device and prints what it made:
//   xload FILE [FRAME...]
// prints "vertices N", "joints N", "frames N", "speed S", "buffers N", then for each FRAME
// (Irrlicht's frames are the file's ticks) the skinned vertex positions: "frame F", then per
// mesh buffer "buffer N" and one "p x y z" line per vertex.
// Exit 2 when the loader refuses the file (Irrlicht's own messages go to stderr).
#include <irrlicht.h>

#include <cstdio>
#include <cstdlib>

using namespace irr;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: xload FILE [FRAME...]\n");
        return 1;
    }
    IrrlichtDevice* device = createDevice(video::EDT_NULL);
    if (!device) {
        std::fprintf(stderr, "no null device\n");
        return 3;
    }
    device->getLogger()->setLogLevel(ELL_WARNING);
    scene::ISceneManager* smgr = device->getSceneManager();
    scene::IAnimatedMesh* mesh = smgr->getMesh(argv[1]);
    if (!mesh) {
        std::fprintf(stderr, "irrlicht could not load %s\n", argv[1]);
        device->drop();
        return 2;
    }
    scene::ISkinnedMesh* skinned = 0;
    if (mesh->getMeshType() == scene::EAMT_SKINNED)
        skinned = static_cast<scene::ISkinnedMesh*>(mesh);
    u32 vertices = 0;
    for (u32 b = 0; b < mesh->getMeshBufferCount(); ++b)
        vertices += mesh->getMeshBuffer(b)->getVertexCount();
    std::printf("vertices %u\n", vertices);
    std::printf("joints %u\n", skinned ? skinned->getJointCount() : 0u);
    std::printf("frames %u\n", mesh->getFrameCount());
    std::printf("speed %g\n", mesh->getAnimationSpeed());
    std::printf("buffers %u\n", mesh->getMeshBufferCount());
    for (int a = 2; a < argc; ++a) {
        f32 frame = static_cast<f32>(std::atof(argv[a]));
        if (skinned) {
            skinned->animateMesh(frame, 1.0f);
            skinned->skinMesh();
        }
        std::printf("frame %g\n", frame);
        for (u32 b = 0; b < mesh->getMeshBufferCount(); ++b) {
            scene::IMeshBuffer* buffer = mesh->getMeshBuffer(b);
            std::printf("buffer %u\n", buffer->getVertexCount());
            for (u32 v = 0; v < buffer->getVertexCount(); ++v) {
                const core::vector3df& p = buffer->getPosition(v);
                std::printf("p %.9g %.9g %.9g\n", p.X, p.Y, p.Z);
            }
        }
    }
    device->drop();
    return 0;
}
