// The Level Zero half of an OpenCL solution's generated launcher: creates the module and kernel
// from the solution's SPIR-V (once per context and device), binds the arguments and sizes of a
// kiln_launch::Plan, and appends the launch to the immediate command list in kiln_context.
//
// Compiled into each OpenCL solution (not into kiln): the OpenCL toolchain writes this header
// and launch_plan.h beside the generated entry point. It calls ze* directly; the symbols bind to
// the loader kiln-worker has opened RTLD_GLOBAL. Errors go to stderr (the worker log) and come
// back as a non-zero return, which kiln reports as RUNTIME_ERROR.
#ifndef KILN_HARNESS_BACKEND_LEVEL_ZERO_ZE_LAUNCHER_H_
#define KILN_HARNESS_BACKEND_LEVEL_ZERO_ZE_LAUNCHER_H_

#include <level_zero/ze_api.h>

#include <cstdio>
#include <mutex>
#include <vector>

#include "harness/model/launch_plan.h"
#include "kiln/abi.h"

namespace kiln_launch {

class ZeLauncher {
 public:
  ZeLauncher(const Plan& plan, const unsigned char* spirv, size_t spirv_bytes)
      : plan_(plan), spirv_(spirv), spirv_bytes_(spirv_bytes) {}

  // 0 on success; 1 for a bad context, 2 for a launch that does not fit the arguments, 3 for a
  // Level Zero call that failed.
  int Launch(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
    std::lock_guard<std::mutex> lock(mu_);
    if (ctx == nullptr || ctx->backend != KILN_BACKEND_LEVEL_ZERO || ctx->stream == nullptr ||
        ctx->device == nullptr || ctx->context == nullptr) {
      return Report(1, "kiln_context is not a Level Zero context");
    }
    AxisValues axes;
    Geometry geometry;
    std::vector<KernelArg> kernel_args(static_cast<size_t>(plan_.num_args));
    Error error;
    if (!ResolveAxes(plan_, args, nargs, &axes, &error) ||
        !ComputeGeometry(plan_, axes, &geometry, &error) ||
        !BindArguments(plan_, args, axes, kernel_args.data(), &error)) {
      return Report(2, error.text);
    }
    auto context = static_cast<ze_context_handle_t>(ctx->context);
    auto device = static_cast<ze_device_handle_t>(ctx->device);
    if (!Prepare(context, device)) return 3;
    for (int32_t i = 0; i < plan_.num_args; ++i) {
      const KernelArg& a = kernel_args[static_cast<size_t>(i)];
      if (!Ok(zeKernelSetArgumentValue(kernel_, static_cast<uint32_t>(i), a.size, a.value),
              "zeKernelSetArgumentValue")) {
        return 3;
      }
    }
    if (!SetGroups(&geometry)) return 3;
    ze_group_count_t count{geometry.group_count[0], geometry.group_count[1],
                           geometry.group_count[2]};
    auto list = static_cast<ze_command_list_handle_t>(ctx->stream);
    if (!Ok(zeCommandListAppendLaunchKernel(list, kernel_, &count, nullptr, 0, nullptr),
            "zeCommandListAppendLaunchKernel")) {
      return 3;
    }
    return 0;
  }

 private:
  int Report(int code, const char* what) const {
    std::fprintf(stderr, "kiln opencl launcher (%s): %s\n", plan_.kernel_name, what);
    return code;
  }

  bool Ok(ze_result_t r, const char* call) const {
    if (r == ZE_RESULT_SUCCESS) return true;
    std::fprintf(stderr, "kiln opencl launcher (%s): %s failed: 0x%x\n", plan_.kernel_name, call,
                 static_cast<unsigned>(r));
    return false;
  }

  // The module and kernel for this context and device (kept; recreated if either changes).
  bool Prepare(ze_context_handle_t context, ze_device_handle_t device) {
    if (kernel_ != nullptr && context == context_ && device == device_) return true;
    if (kernel_ != nullptr) zeKernelDestroy(kernel_);
    if (module_ != nullptr) zeModuleDestroy(module_);
    kernel_ = nullptr;
    module_ = nullptr;
    ze_module_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
    desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
    desc.inputSize = spirv_bytes_;
    desc.pInputModule = spirv_;
    ze_module_build_log_handle_t log = nullptr;
    ze_result_t r = zeModuleCreate(context, device, &desc, &module_, &log);
    if (r != ZE_RESULT_SUCCESS) {
      PrintBuildLog(log);
      module_ = nullptr;
    } else if (log != nullptr) {
      zeModuleBuildLogDestroy(log);
    }
    if (!Ok(r, "zeModuleCreate")) return false;
    ze_kernel_desc_t kdesc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, plan_.kernel_name};
    if (!Ok(zeKernelCreate(module_, &kdesc, &kernel_), "zeKernelCreate")) {
      kernel_ = nullptr;
      return false;
    }
    context_ = context;
    device_ = device;
    return true;
  }

  void PrintBuildLog(ze_module_build_log_handle_t log) const {
    if (log == nullptr) return;
    size_t size = 0;
    if (zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS && size > 0) {
      std::vector<char> text(size + 1, '\0');
      if (zeModuleBuildLogGetString(log, &size, text.data()) == ZE_RESULT_SUCCESS) {
        std::fprintf(stderr, "kiln opencl launcher: module build log:\n%s\n", text.data());
      }
    }
    zeModuleBuildLogDestroy(log);
  }

  // The plan's group size, or the driver's suggestion for the global size; then the counts.
  bool SetGroups(Geometry* g) {
    if (g->group_size[0] == 0) {
      uint32_t size[3] = {1, 1, 1};
      if (!Ok(zeKernelSuggestGroupSize(
                  kernel_, static_cast<uint32_t>(g->global[0]), static_cast<uint32_t>(g->global[1]),
                  static_cast<uint32_t>(g->global[2]), &size[0], &size[1], &size[2]),
              "zeKernelSuggestGroupSize")) {
        return false;
      }
      for (int d = 0; d < kMaxDims; ++d) {
        g->group_size[d] = size[d] == 0 ? 1 : size[d];
        g->group_count[d] =
            static_cast<uint32_t>((g->global[d] + g->group_size[d] - 1) / g->group_size[d]);
      }
    }
    return Ok(zeKernelSetGroupSize(kernel_, g->group_size[0], g->group_size[1], g->group_size[2]),
              "zeKernelSetGroupSize");
  }

  const Plan& plan_;
  const unsigned char* spirv_;
  size_t spirv_bytes_;
  std::mutex mu_;
  ze_context_handle_t context_ = nullptr;
  ze_device_handle_t device_ = nullptr;
  ze_module_handle_t module_ = nullptr;
  ze_kernel_handle_t kernel_ = nullptr;
};

}  // namespace kiln_launch

#endif  // KILN_HARNESS_BACKEND_LEVEL_ZERO_ZE_LAUNCHER_H_
