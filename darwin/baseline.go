package darwin

// What every profile allows, whatever the policy: the services, system
// calls and devices that common tools need on macOS, each named.

// Mach services: logging, notifications, name and user lookups,
// certificate trust and the keychain (git's credential helper), FSEvents,
// preferences, the per-user directories, DNS configuration and power
// management.
var baseMachLookups = []string{
	"com.apple.system.logger", "com.apple.system.notification_center", "com.apple.logd", "com.apple.diagnosticd",
	"com.apple.SystemConfiguration.configd", "com.apple.SystemConfiguration.DNSConfiguration",
	"com.apple.system.opendirectoryd.libinfo", "com.apple.system.opendirectoryd.membership",
	"com.apple.trustd", "com.apple.trustd.agent", "com.apple.ocspd", "com.apple.securityd.xpc", "com.apple.SecurityServer",
	"com.apple.FSEvents", "com.apple.coreservices.launchservicesd",
	"com.apple.cfprefsd.daemon", "com.apple.cfprefsd.agent", "com.apple.bsd.dirhelper",
	"com.apple.PowerManagement.control",
}

// Named sysctls that runtimes read: CPU and memory figures, the OS
// version, limits, the CPU type and pointer-authentication entries, the
// lockdown mode state, the routing table (interface lookups). No kern.
// prefix: kern.proc, kern.procargs2 and their kind expose other processes'
// arguments and environment.
var sysctlNames = []string{
	"hw.activecpu", "hw.byteorder", "hw.cacheconfig", "hw.cachelinesize", "hw.cpufamily", "hw.cpusubtype", "hw.cputype",
	"hw.l1dcachesize", "hw.l1icachesize", "hw.l2cachesize", "hw.l3cachesize", "hw.logicalcpu", "hw.logicalcpu_max",
	"hw.machine", "hw.memsize", "hw.model", "hw.ncpu", "hw.nperflevels", "hw.packages", "hw.pagesize",
	"hw.physicalcpu", "hw.physicalcpu_max", "hw.tbfrequency", "hw.vectorunit",
	"kern.argmax", "kern.hostname", "kern.maxfiles", "kern.maxfilesperproc", "kern.maxproc",
	"kern.osproductversion", "kern.osrelease", "kern.ostype", "kern.osvariant_status", "kern.osversion",
	"kern.secure_kernel", "kern.tcsm_available", "kern.tcsm_enable", "kern.usrstack64", "kern.version",
	"kern.hv_vmm_present", "kern.ngroups", "kern.boottime",
	"security.mac.lockdown_mode_state", "sysctl.proc_cputype", "sysctl.proc_native", "vm.loadavg", "vm.swapusage",
}

var sysctlPrefixes = []string{"hw.optional.", "hw.perflevel", "machdep.cpu.", "machdep.ptrauth", "net.routetable."}

// The two sysctls that V8 and Java write (a read through a buffer the
// kernel counts as a write).
var sysctlWrites = []string{"kern.grade_cputype", "kern.tcsm_enable"}

// Shared memory read for preferences and notifications.
var shmNamePrefixes = []string{"apple.cfprefs."}
var shmNames = []string{"apple.shm.notification_center"}

// macOS's own system paths, readable under defaultDenyRead (not
// strictDenyRead) besides the ones the policy lists: the dynamic loader
// and the frameworks live here; /private/var/run holds the resolver's
// configuration.
var systemReadPaths = []string{"/System", "/Library", "/Applications", "/private/var/db/dyld", "/private/var/db/timezone",
	"/private/var/select", "/private/var/run", "/opt/homebrew"}

// mDNSResponder's socket: name resolution when the network is the host's.
const dnsSocket = "/private/var/run/mDNSResponder"
