/* `coldstart image build`: a ready-to-boot Linux guest (kernel, initramfs,
 * manifest) from Debian's archive; prints the image directory. */
#include "commands.h"
#include "err.h"
#include "image.h"
#include "output.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

enum { OPT_OUT = 0x100, OPT_PACKAGE, OPT_FORCE, OPT_JSON, OPT_ROOTFS,
       OPT_MIRROR };

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "kernel-package", required_argument, NULL, OPT_PACKAGE },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "rootfs", no_argument, NULL, OPT_ROOTFS },
	{ "mirror", required_argument, NULL, OPT_MIRROR },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart image build [--out DIR] [--kernel-package NAME]"
	      " [--rootfs]\n"
	      "                             [--mirror URL] [--force] [--json]\n"
	      "Builds a Linux guest from Debian's archive: the cloud kernel\n"
	      "(the package " IMAGE_META_PACKAGE " depends on) and an\n"
	      "initramfs of busybox-static, coldstart-init, coldstart-agent and\n"
	      "the virtio modules. Prints the image directory (" IMAGE_KERNEL
	      ",\n" IMAGE_INITRAMFS ", " IMAGE_MANIFEST ", with --rootfs "
	      IMAGE_ROOTFS ").\n"
	      "  -h, --help            show this help and exit\n"
	      "      --out DIR         the image directory (default: a cache\n"
	      "                        directory named after the kernel package)\n"
	      "      --kernel-package NAME  another linux-image-* package\n"
	      "      --rootfs          also " IMAGE_ROOTFS ": Debian "
	      IMAGE_ROOTFS_SUITE " (debootstrap\n"
	      "                        minbase, " IMAGE_ROOTFS_PACKAGES
	      ") with the agent, as root\n"
	      "      --mirror URL      debootstrap's mirror (default\n"
	      "                        " IMAGE_ROOTFS_MIRROR ")\n"
	      "      --force           rebuild even if the cached image is fresh\n"
	      "      --json            print the manifest instead of the path\n"
	      "Boot it: coldstart run --kernel DIR/" IMAGE_KERNEL
	      " --initrd DIR/" IMAGE_INITRAMFS "\n"
	      "  --cmdline '" IMAGE_CMDLINE " coldstart.run=\"uname -a\"'\n"
	      "or, with --rootfs: coldstart run --kernel DIR/" IMAGE_KERNEL
	      " --initrd\n  DIR/" IMAGE_INITRAMFS " --rootfs DIR/" IMAGE_ROOTFS
	      " --exec 'python3 -V'\n",
	      out);
}

/* Returns -1 to go on, or the exit code to return at once. */
static int parse_args(int argc, char **argv, struct image_options *o,
		      bool *json)
{
	int c;

	if (argc < 2 || strcmp(argv[1], "build")) {
		if (argc >= 2 && (!strcmp(argv[1], "--help") ||
				  !strcmp(argv[1], "-h"))) {
			usage(stdout);
			return CLI_OK;
		}
		cli__error(CLI_USAGE, "image: expected the subcommand 'build'");
		return cli__usage_error("image");
	}
	optind = 0; /* another command may have run getopt before */
	while ((c = getopt_long(argc - 1, argv + 1, "h", long_options,
				NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return CLI_OK;
		case OPT_OUT:
			o->out_dir = optarg;
			break;
		case OPT_PACKAGE:
			o->kernel_package = optarg;
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_JSON:
			*json = true;
			break;
		case OPT_ROOTFS:
			o->rootfs = true;
			break;
		case OPT_MIRROR:
			o->mirror = optarg;
			break;
		default:
			return cli__usage_error("image");
		}
	}
	if (optind < argc - 1) {
		cli__error(CLI_USAGE, "image build: unexpected argument '%s'",
			   argv[optind + 1]);
		return cli__usage_error("image");
	}
	if (o->out_dir && !*o->out_dir)
		return cli__error(CLI_USAGE, "image build: --out is empty");
	return -1;
}

static int print_manifest(const char *dir)
{
	char path[PATH_MAX + sizeof(IMAGE_MANIFEST) + 1];
	json_t *root;
	int ret = CLI_OK;

	snprintf(path, sizeof(path), "%s/%s", dir, IMAGE_MANIFEST);
	root = output__json_load(path, &(json_error_t){ 0 });
	if (!root)
		return cli__error(CLI_FAIL, "reading %s failed", path);
	if (json_dumpf(root, stdout, JSON_INDENT(2)) || puts("") == EOF)
		ret = cli__error(CLI_FAIL, "writing to stdout failed");
	json_decref(root);
	return ret;
}

int cmd_image(int argc, char **argv)
{
	struct image_options o = { 0 };
	struct image_result r;
	bool json = false;
	int ret = parse_args(argc, argv, &o, &json);

	if (ret >= 0)
		return ret;
	ret = image__build(&o, &r);
	if (ret < 0)
		return cli__error(CLI_FAIL, "image build: %s", err__last());
	if (json)
		return print_manifest(r.dir);
	printf("%s\n", r.dir);
	return fflush(stdout) ? CLI_FAIL : CLI_OK;
}
