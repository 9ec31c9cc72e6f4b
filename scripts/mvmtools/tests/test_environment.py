"""The environment record: paging parameters, grouping."""
import unittest

from mvmtools import environment


class Params(unittest.TestCase):
    def test_real_parameter_names(self):
        env = {"kvm_modules": {
            "kvm": {"halt_poll_ns": "200000", "tdp_mmu": "Y", "nx_huge_pages": "N", "eager_page_split": "Y"},
            "kvm_intel": {"ept": "Y", "eptad": "Y", "unrestricted_guest": "Y", "enable_unrestricted_guest": "Y", "pml": "Y"},
            "kvm_amd": {"npt": "Y", "avic": "N"}}}
        self.assertEqual(environment.paging_params(env), [
            "kvm.tdp_mmu=Y", "kvm.nx_huge_pages=N", "kvm.eager_page_split=Y", "kvm_intel.ept=Y", "kvm_intel.eptad=Y",
            "kvm_intel.unrestricted_guest=Y", "kvm_amd.npt=Y"])

    def test_parameters_exist(self):
        # Every listed parameter of a loaded module is one the running kernel has.
        import os

        for module, params in environment.PAGING_PARAMS.items():
            d = "/sys/module/%s/parameters" % module
            if not os.path.isdir(d):
                continue
            have = set(os.listdir(d))
            for p in params:
                self.assertIn(p, have, "%s.%s" % (module, p))

    def test_group_key(self):
        env = {"hostname": "h", "kernel_release": "k", "cpu_model": "c", "thp_enabled": "madvise",
               "kvm_modules": {"kvm": {"tdp_mmu": "N"}}}
        key = environment.group_key(env, {"kvm": "pvm", "paging": "shadow"})
        self.assertEqual(key, ("h", "k", "c", "pvm", "shadow", "kvm.tdp_mmu=N", "madvise"))
        self.assertIn("pvm, shadow paging (kvm.tdp_mmu=N)", environment.group_label(key))
