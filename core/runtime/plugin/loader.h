// Plugin discovery, loading and selection (docs/architecture.md, "Loader").
//
// Discovery: the build's own plugin directory (<core lib dir>/../plugins/
// <name>/libflagos_<name>.so), plugin wheels advertised through the Python
// entry-point group "torch_fl.plugins" (passed in by the Python layer), and
// an explicit FLAGOS_PLUGIN.
// Selection: an explicit plugin is loaded or the activation fails with the
// real cause; otherwise the first accelerator plugin that loads and reports a
// device wins, failures warn once and are skipped, and the host plugin is
// the fallback (said under FLAGOS_LOG=plugin, and by selection()).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plugin/plugin.h"

namespace flagos::plugin {

// <directory of the library holding this code>/../plugins
std::vector<std::string> default_search_dirs();

// Every plugin library under `dirs` plus `entry_points`, entry points first.
std::vector<Candidate> discover(const std::vector<std::string>& dirs,
                                const std::vector<Candidate>& entry_points);

// FLAGOS_PLUGIN_OPTIONS as key/value pairs; malformed items warn and are skipped.
Options options_from_env();

// Opens, handshakes and validates one plugin. The same library file yields
// the same Plugin object. Throws flagos::Error naming the plugin, its path
// and the cause.
std::shared_ptr<const Plugin> load(const Candidate& candidate, const Options& options);

// Runs the selection policy once and makes the result the process's active
// plugin. Throws flagos::Error when an explicit FLAGOS_PLUGIN cannot be used
// or nothing at all can be loaded; the process stays usable either way.
std::shared_ptr<const Plugin> activate(const std::vector<Candidate>& entry_points,
                                       const std::vector<std::string>& dirs);

// The active plugin, or nullptr before a successful activate().
std::shared_ptr<const Plugin> active();

// Why the active plugin was chosen ("FLAGOS_PLUGIN=host", "no accelerator
// plugin found a device (cuda: 0 devices); using the host plugin"); "" before.
std::string selection();

}  // namespace flagos::plugin
